"""What every method is given and what it must provide."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from thinkgraph.config import Settings
from thinkgraph.models import Answer
from thinkgraph.retrieval.views import IndexView
from thinkgraph.store.base import GraphStore

if TYPE_CHECKING:  # (the LLM client and httpx cost 0.1 s to import; an LLM-free ask never needs them)
    from thinkgraph.llm.service import LLM

NO_LLM_MESSAGE = ("answer synthesis needs an LLM endpoint (set THINKGRAPH_LLM_BASE_URL or [llm] base_url); "
                  "showing the retrieved evidence")


@dataclass
class MethodContext:
    store: GraphStore
    view: IndexView
    settings: Settings
    llm: LLM | None = None


class Method(Protocol):
    name: str

    async def answer(self, question: str) -> Answer: ...
