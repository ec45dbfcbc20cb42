"""thinkgraph as a LangChain retriever (``pip install 'thinkgraph[langchain]'``: langchain-core only).

    retriever = ThinkGraphRetriever.from_index("my.db", method="ppr", top_k=5)
    docs = retriever.invoke("Who founded the Harbor Hill Observatory?")

Each ``Document`` is one cited passage: ``page_content`` is the passage, and ``metadata`` holds
``doc_id``, ``title``, ``chunk_id``, ``start``/``end`` (the character span in the document of the
sentence the citation was narrowed to, which is ``quote``), ``page`` (PDFs), ``score``, ``method`` and
``kind`` ("passage"). Without ``include_answer`` the method retrieves without an LLM (as the service's
/retrieve does); with it the method answers, and the answer comes first as a Document of kind
"answer" (its text, ``status``, ``message``, the cited ``chunk_ids`` and the LLM usage). Errors are
thinkgraph's own one-line errors (``thinkgraph.errors``), raised when the retriever is made where they
can be (an unknown method, a bad option, a missing index) and otherwise by ``invoke``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from thinkgraph.integrations.common import require

require("langchain_core", "langchain")

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from pydantic import ConfigDict, Field, model_validator  # noqa: E402

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.asyncutil import run_sync  # noqa: E402
from thinkgraph.integrations.common import Query, answer_metadata, open_index, passages  # noqa: E402
from thinkgraph.methods.catalog import DEFAULT_METHOD  # noqa: E402

if TYPE_CHECKING:
    from thinkgraph.config import Settings
    from thinkgraph.embed.base import Embedder
    from thinkgraph.llm.backend import ChatBackend

__all__ = ["ThinkGraphRetriever"]


class ThinkGraphRetriever(BaseRetriever):
    """A thinkgraph method over one index as a LangChain retriever (sync ``invoke`` and async
    ``ainvoke``, so also inside chains)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    graph: ThinkGraph
    method: str = DEFAULT_METHOD
    top_k: int | None = None  # passages returned; mapped onto the method's own setting
    options: dict[str, Any] = Field(default_factory=dict)  # the method's settings (as `ask -o`)
    include_answer: bool = False  # ask the method (its LLM) and return its answer first

    @model_validator(mode="after")
    def _check(self) -> ThinkGraphRetriever:
        Query(self.graph, self.method, self.top_k, self.options).check()
        return self

    @classmethod
    def from_index(cls, index: str | Path, *, settings: Settings | None = None, embedder: Embedder | None = None,
                   backend: ChatBackend | None = None, **fields: Any) -> ThinkGraphRetriever:
        """A retriever over the index at ``index`` (a file or a PostgreSQL URL), opened with the
        settings given or read from thinkgraph.toml and the environment. Close it with
        ``retriever.graph.close()``."""
        return cls(graph=open_index(index, settings=settings, embedder=embedder, backend=backend), **fields)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return run_sync(self._documents(query))

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun) -> list[Document]:
        return await self._documents(query)

    async def _documents(self, question: str) -> list[Document]:
        asked = Query(self.graph, self.method, self.top_k, self.options)
        answer = await (asked.ask(question) if self.include_answer else asked.retrieve(question))
        docs = [Document(page_content=p.text, metadata=p.metadata, id=p.chunk_id)
                for p in passages(self.graph, answer)]
        if self.include_answer:
            docs.insert(0, Document(page_content=answer.text or "", metadata=answer_metadata(answer)))
        return docs
