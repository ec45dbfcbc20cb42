"""What every method is given and what it must provide."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel

from thinkgraph.config import Settings
from thinkgraph.models import Answer
from thinkgraph.retrieval.views import IndexView
from thinkgraph.store.base import GraphStore
from thinkgraph.tracing import Trace

if TYPE_CHECKING:  # (the LLM client and httpx cost 0.1 s to import; an LLM-free ask never needs them)
    from thinkgraph.llm.service import LLM

# An answer's ``stats["outcome"]`` when the method judged the question outside the index (a2rag's gate).
OUT_OF_SCOPE = "out_of_scope"
NO_LLM_MESSAGE = ("answer synthesis needs an LLM endpoint (set THINKGRAPH_LLM_BASE_URL or [llm] base_url); "
                  "showing the retrieved evidence")


@dataclass
class MethodContext:
    """One question's view of the index and its models. ``trace`` is the question's trace: a method
    records each step by appending it there (listeners hear of it then) and returns it in its Answer."""

    store: GraphStore
    view: IndexView
    settings: Settings
    llm: LLM | None = None
    trace: Trace = field(default_factory=Trace)


class Method(Protocol):
    """Built as ``Method(ctx, config)`` from its catalog record (methods/catalog.py); ``answer``
    returns the core result, and methods/run.py's ``run_method`` completes it."""

    name: str
    ctx: MethodContext
    config: BaseModel  # its catalog record's settings model

    async def answer(self, question: str) -> Answer: ...
