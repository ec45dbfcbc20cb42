"""thinkgraph in LlamaIndex (thinkgraph.integrations.llamaindex) with the real llama-index-core: the
retriever inside LlamaIndex's own query engine over the sample corpus, the metadata of every node
checked against the source files, thinkgraph's query engine with its citations as source nodes, the
async paths, and thinkgraph's one-line errors through the adapter."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.response_synthesizers.context_only import ContextOnly
from llama_index.core.schema import MetadataMode, NodeWithScore

from support import SAMPLE_CORPUS, index_opener
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.errors import ConfigError, IndexFileError, UnknownMethodError
from thinkgraph.integrations.common import METADATA_KEYS
from thinkgraph.integrations.llamaindex import ThinkGraphQueryEngine, ThinkGraphRetriever
from thinkgraph.testing import ScriptedBackend

QUESTION = "Who founded the Harbor Hill Observatory?"
ANSWER_PROMPT = "Answer the question using only the numbered passages"
TITLES = {"people.md": "People of the Harbor Hill story", "harbor-observatory.md": "The Harbor Hill Observatory",
          "kestrel-bay.md": "Kestrel Bay", "skarn-lighthouse.txt": "skarn-lighthouse"}


@pytest.fixture(scope="module")
def open_graph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., ThinkGraph]]:
    """The sample corpus indexed once for the module, opened with a given backend (or none)."""
    yield from index_opener(tmp_path_factory.mktemp("sample") / "sample.db", lambda tg: tg.index([SAMPLE_CORPUS]))


def check_node(hit: NodeWithScore, graph: ThinkGraph, method: str) -> None:
    """A node's text, id, spans and metadata say where it comes from, exactly."""
    node, meta = hit.node, hit.node.metadata
    assert set(meta) == set(METADATA_KEYS) and meta["kind"] == "passage" and meta["method"] == method
    source = (SAMPLE_CORPUS / meta["doc_id"]).read_text(encoding="utf-8")
    assert meta["title"] == TITLES[meta["doc_id"]] and meta["page"] is None
    assert source[meta["start"]:meta["end"]] == meta["quote"] and meta["quote"] in node.get_content()
    chunk = graph.store.get_node(meta["chunk_id"])
    assert chunk is not None and node.node_id == meta["chunk_id"] and node.get_content() == chunk.text
    assert node.start_char_idx is not None and node.end_char_idx is not None
    assert source[node.start_char_idx:node.end_char_idx] == node.get_content()
    assert node.start_char_idx <= meta["start"] < meta["end"] <= node.end_char_idx
    assert hit.score == meta["score"] and isinstance(hit.score, float) and hit.score > 0


def test_llamaindex_query_engine_over_the_thinkgraph_retriever(open_graph: Callable[..., ThinkGraph]) -> None:
    graph = open_graph()
    retriever = ThinkGraphRetriever(graph, "ppr", top_k=3)
    # LlamaIndex's own pipeline: its retriever query engine, with the synthesizer that returns the
    # context it would give a model (so no model is needed to see what one would read)
    engine = RetrieverQueryEngine(retriever, response_synthesizer=ContextOnly(llm=MockLLM()))
    response = engine.query(QUESTION)
    assert len(response.source_nodes) == 3 and len({n.node.node_id for n in response.source_nodes}) == 3
    for hit in response.source_nodes:
        check_node(hit, graph, "ppr")
    assert any(n.node.metadata["doc_id"] == "people.md" and "founded the Harbor Hill Observatory" in
               n.node.metadata["quote"] for n in response.source_nodes)
    # a model reads each passage with its title and document, not the spans and scores
    context = str(response)
    assert "title: People of the Harbor Hill story" in context and "doc_id: people.md" in context
    assert "score:" not in context and "chunk_id:" not in context and "quote:" not in context
    assert response.source_nodes[0].node.get_content(metadata_mode=MetadataMode.EMBED) == \
        response.source_nodes[0].node.get_content()


async def test_async_retrieval_gives_what_sync_retrieval_gives(open_graph: Callable[..., ThinkGraph]) -> None:
    graph = open_graph()
    retriever = ThinkGraphRetriever(graph, "hybrid", top_k=2)
    sync_hits = retriever.retrieve(QUESTION)  # (called inside a running loop, as in a notebook)
    async_hits = await retriever.aretrieve(QUESTION)
    assert [(h.node.node_id, h.score, h.node.metadata) for h in async_hits] == \
        [(h.node.node_id, h.score, h.node.metadata) for h in sync_hits]
    assert len(async_hits) == 2
    for hit in async_hits:
        check_node(hit, graph, "hybrid")
    engine = RetrieverQueryEngine(retriever, response_synthesizer=ContextOnly(llm=MockLLM()))
    response = await engine.aquery("Where is the Skarn Lighthouse?")
    assert "skarn-lighthouse.txt" in {n.node.metadata["doc_id"] for n in response.source_nodes}


async def test_the_query_engine_answers_with_its_citations_as_source_nodes(
        open_graph: Callable[..., ThinkGraph]) -> None:
    backend = ScriptedBackend(rules=[(ANSWER_PROMPT, "Adela Morrow founded it [2]")])
    graph = open_graph(backend)
    engine = ThinkGraphQueryEngine(graph, "naive", top_k=3)
    response = engine.query(QUESTION)
    assert response.response == "Adela Morrow founded it" and str(response) == "Adela Morrow founded it"
    meta = response.metadata or {}
    assert meta["status"] == "answered" and meta["method"] == "naive" and meta["llm_calls"] == 1
    # the answer cited passage [2] only: the source nodes are that passage, the second one retrieved
    retrieved = ThinkGraphRetriever(graph, "naive", top_k=3).retrieve(QUESTION)
    assert [n.node.node_id for n in response.source_nodes] == meta["chunk_ids"] == [retrieved[1].node.node_id]
    check_node(response.source_nodes[0], graph, "naive")
    again = await engine.aquery(QUESTION)  # answered from the index's LLM cache: no second call
    assert again.response == response.response and len(backend.requests) == 1
    assert [n.node.metadata for n in again.source_nodes] == [n.node.metadata for n in response.source_nodes]


async def test_without_an_llm_the_response_is_none_and_says_why(open_graph: Callable[..., ThinkGraph]) -> None:
    response = await ThinkGraphQueryEngine(open_graph(), "ppr", top_k=2).aquery(QUESTION)
    meta = response.metadata or {}
    assert response.response is None and meta["status"] == "evidence_only"
    assert "needs an LLM endpoint" in meta["message"] and len(response.source_nodes) == 2


def _one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(exc.value)
    assert message and "\n" not in message
    return message


async def test_bad_method_option_and_missing_index_are_one_line_errors(open_graph: Callable[..., ThinkGraph],
                                                                       tmp_path: Path) -> None:
    graph = open_graph()
    for adapter in (ThinkGraphRetriever, ThinkGraphQueryEngine):
        with pytest.raises(UnknownMethodError) as bad:
            adapter(graph, "nope")
        assert _one_line(bad).startswith("unknown method 'nope'; valid methods: none, naive, ppr")
        with pytest.raises(ConfigError) as option:
            adapter(graph, "tog3", options={"horizon": 0})
        assert _one_line(option).startswith("tog3 option horizon")
    missing = tmp_path / "missing.db"
    with pytest.raises(IndexFileError) as opened:
        ThinkGraphQueryEngine(missing, settings=Settings())
    assert _one_line(opened).startswith(f"no index at {missing}")
    # a ThinkGraph made for a path that holds no index: the error comes through retrieve and query
    with pytest.raises(IndexFileError) as retrieved:
        ThinkGraphRetriever(ThinkGraph(missing)).retrieve(QUESTION)
    with pytest.raises(IndexFileError) as queried:
        await ThinkGraphQueryEngine(ThinkGraph(missing)).aquery(QUESTION)
    assert _one_line(retrieved) == _one_line(queried) and not missing.exists()
