"""thinkgraph in LlamaIndex (``pip install 'thinkgraph[llamaindex]'``: llama-index-core only): a
retriever of cited passages and a query engine that answers with the method.

    retriever = ThinkGraphRetriever("my.db", method="ppr", top_k=5)
    nodes = retriever.retrieve("Who founded the Harbor Hill Observatory?")
    response = ThinkGraphQueryEngine("my.db", method="tog3").query("...")

A ``NodeWithScore`` holds one cited passage: the node's text is the passage (``start_char_idx`` and
``end_char_idx`` its span in the document), its id the chunk id, and its metadata the same keys as
the LangChain adapter's: ``doc_id``, ``title``, ``chunk_id``, ``start``/``end`` (the span of the cited
sentence, ``quote``), ``page``, ``score``, ``method``, ``kind``. A model downstream sees the title and
the document id of each passage, not the spans and scores. The retriever retrieves without an LLM;
the query engine's ``Response`` is the method's answer (``response`` is None when there is none: see
``metadata["status"]`` and ``metadata["message"]``), with its citations as ``source_nodes``. Errors are
thinkgraph's one-line errors (``thinkgraph.errors``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from thinkgraph.integrations.common import require

require("llama_index.core", "llamaindex")

from llama_index.core.base.base_query_engine import BaseQueryEngine  # noqa: E402
from llama_index.core.base.base_retriever import BaseRetriever  # noqa: E402
from llama_index.core.base.response.schema import Response  # noqa: E402
from llama_index.core.callbacks import CallbackManager  # noqa: E402
from llama_index.core.prompts.mixin import PromptMixinType  # noqa: E402
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode  # noqa: E402

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.asyncutil import run_sync  # noqa: E402
from thinkgraph.integrations.common import METADATA_KEYS, Passage, Query, answer_metadata, open_index, passages  # noqa: E402
from thinkgraph.methods.catalog import DEFAULT_METHOD  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Mapping

    from thinkgraph.config import Settings
    from thinkgraph.embed.base import Embedder
    from thinkgraph.llm.backend import ChatBackend

__all__ = ["ThinkGraphQueryEngine", "ThinkGraphRetriever"]

SHOWN_TO_MODELS = ("title", "doc_id")  # the rest of the metadata is for code, not for a prompt


def to_node(passage: Passage) -> NodeWithScore:
    hidden = [k for k in METADATA_KEYS if k not in SHOWN_TO_MODELS]
    node = TextNode(id_=passage.chunk_id, text=passage.text, metadata=passage.metadata,
                    start_char_idx=passage.passage_start, end_char_idx=passage.passage_end,
                    excluded_llm_metadata_keys=hidden, excluded_embed_metadata_keys=list(METADATA_KEYS))
    return NodeWithScore(node=node, score=passage.score)


class _Adapter:
    """The method and index an adapter asks, checked when it is made."""

    asking: Query

    def _setup(self, index: ThinkGraph | str | Path, method: str, top_k: int | None,
               options: Mapping[str, Any] | None, open_kwargs: dict[str, Any]) -> None:
        self.asking = Query(open_index(index, **open_kwargs), method, top_k, dict(options or {})).check()

    @property
    def graph(self) -> ThinkGraph:
        return self.asking.graph


class ThinkGraphRetriever(_Adapter, BaseRetriever):
    """A thinkgraph method's retrieval (no LLM) as a LlamaIndex retriever, sync and async. ``index`` is
    an open ThinkGraph, or a path or PostgreSQL URL opened with ``settings``/``embedder``."""

    def __init__(self, index: ThinkGraph | str | Path, method: str = DEFAULT_METHOD, *, top_k: int | None = None,
                 options: Mapping[str, Any] | None = None, settings: Settings | None = None,
                 embedder: Embedder | None = None, callback_manager: CallbackManager | None = None) -> None:
        self._setup(index, method, top_k, options, {"settings": settings, "embedder": embedder})
        super().__init__(callback_manager=callback_manager)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return run_sync(self._aretrieve(query_bundle))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        answer = await self.asking.retrieve(query_bundle.query_str)
        return [to_node(p) for p in passages(self.graph, answer)]


class ThinkGraphQueryEngine(_Adapter, BaseQueryEngine):
    """A thinkgraph method's answer as a LlamaIndex query engine: ``response`` is the answer's text,
    ``source_nodes`` its citations, ``metadata`` its status, message, cited chunk ids and LLM usage."""

    def __init__(self, index: ThinkGraph | str | Path, method: str = DEFAULT_METHOD, *, top_k: int | None = None,
                 options: Mapping[str, Any] | None = None, settings: Settings | None = None,
                 embedder: Embedder | None = None, backend: ChatBackend | None = None,
                 callback_manager: CallbackManager | None = None) -> None:
        self._setup(index, method, top_k, options, {"settings": settings, "embedder": embedder, "backend": backend})
        super().__init__(callback_manager=callback_manager)

    def _get_prompt_modules(self) -> PromptMixinType:
        return {}  # the method's prompts are its own (thinkgraph.methods), not LlamaIndex prompts

    def _query(self, query_bundle: QueryBundle) -> Response:
        return run_sync(self._aquery(query_bundle))

    async def _aquery(self, query_bundle: QueryBundle) -> Response:
        answer = await self.asking.ask(query_bundle.query_str)
        return Response(response=answer.text, source_nodes=[to_node(p) for p in passages(self.graph, answer)],
                        metadata=answer_metadata(answer))
