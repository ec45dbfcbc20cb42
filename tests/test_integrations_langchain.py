"""thinkgraph as a LangChain retriever (thinkgraph.integrations.langchain) with the real langchain-core:
chains over the sample corpus, sync and async, the metadata of every Document checked against the
source files, the method's answer when asked for, and thinkgraph's one-line errors through the adapter."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from support import SAMPLE_CORPUS, index_opener
from thinkgraph.api import ThinkGraph
from thinkgraph.errors import ConfigError, IndexFileError, UnknownMethodError
from thinkgraph.integrations.common import METADATA_KEYS, require
from thinkgraph.integrations.langchain import ThinkGraphRetriever
from thinkgraph.testing import ScriptedBackend

QUESTION = "Who founded the Harbor Hill Observatory?"
ANSWER_PROMPT = "Answer the question using only the numbered passages"  # naive's answer prompt
TITLES = {"people.md": "People of the Harbor Hill story", "harbor-observatory.md": "The Harbor Hill Observatory",
          "kestrel-bay.md": "Kestrel Bay", "skarn-lighthouse.txt": "skarn-lighthouse"}


@pytest.fixture(scope="module")
def open_graph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., ThinkGraph]]:
    """The sample corpus indexed once for the module, opened with a given backend (or none)."""
    yield from index_opener(tmp_path_factory.mktemp("sample") / "sample.db", lambda tg: tg.index([SAMPLE_CORPUS]))


def check_passage(doc: Document, graph: ThinkGraph, method: str) -> None:
    """The metadata of a passage Document says where its text comes from, exactly."""
    meta = doc.metadata
    assert set(meta) == set(METADATA_KEYS) and meta["kind"] == "passage" and meta["method"] == method
    source = (SAMPLE_CORPUS / meta["doc_id"]).read_text(encoding="utf-8")
    assert meta["title"] == TITLES[meta["doc_id"]]
    assert 0 <= meta["start"] < meta["end"] <= len(source) and source[meta["start"]:meta["end"]] == meta["quote"]
    chunk = graph.store.get_node(meta["chunk_id"])
    assert chunk is not None and chunk.text == doc.page_content and doc.id == meta["chunk_id"]
    assert meta["quote"] in doc.page_content and doc.page_content in source
    assert meta["page"] is None  # Markdown and text files have no pages
    assert isinstance(meta["score"], float) and meta["score"] > 0


def test_a_chain_gets_the_cited_passages_with_their_metadata(open_graph: Callable[..., ThinkGraph]) -> None:
    graph = open_graph()
    retriever = ThinkGraphRetriever(graph=graph, method="ppr", top_k=3)
    seen: list[Document] = []

    def context(docs: list[Document]) -> str:
        seen.extend(docs)
        return "\n\n".join(f"[{d.metadata['title']}] {d.page_content}" for d in docs)

    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    chain = {"context": retriever | RunnableLambda(context), "question": RunnablePassthrough()} | prompt
    text = chain.invoke(QUESTION).to_string()
    assert len(seen) == 3 and len({d.metadata["chunk_id"] for d in seen}) == 3
    for doc in seen:
        check_passage(doc, graph, "ppr")
    # the passage that answers it is among them, narrowed to the sentence that says so
    assert any(d.metadata["doc_id"] == "people.md" and "founded the Harbor Hill Observatory" in d.metadata["quote"]
               for d in seen)
    assert "[People of the Harbor Hill story] # People of the Harbor Hill story" in text and QUESTION in text
    scores = [d.metadata["score"] for d in seen]
    assert scores == sorted(scores, reverse=True)


def test_the_answer_comes_first_when_asked_for(open_graph: Callable[..., ThinkGraph]) -> None:
    backend = ScriptedBackend(rules=[(ANSWER_PROMPT, "Adela Morrow founded it [1]")])
    graph = open_graph(backend)
    docs = ThinkGraphRetriever(graph=graph, method="naive", top_k=3, include_answer=True).invoke(QUESTION)
    answer, cited = docs[0], docs[1:]
    assert answer.page_content == "Adela Morrow founded it" and answer.metadata["kind"] == "answer"
    assert answer.metadata["status"] == "answered" and answer.metadata["method"] == "naive"
    assert answer.metadata["llm_calls"] == 1 and answer.metadata["question"] == QUESTION
    # the answer cited passage [1] only: that passage is the one Document after it
    assert [d.metadata["chunk_id"] for d in cited] == answer.metadata["chunk_ids"] and len(cited) == 1
    check_passage(cited[0], graph, "naive")
    # without include_answer the same retriever asks no LLM and returns all three, [1] first
    calls = len(backend.requests)
    retrieved = ThinkGraphRetriever(graph=graph, method="naive", top_k=3).invoke(QUESTION)
    assert len(backend.requests) == calls and len(retrieved) == 3
    assert retrieved[0].metadata["chunk_id"] == cited[0].metadata["chunk_id"]


async def test_async_paths_give_what_the_sync_ones_give(open_graph: Callable[..., ThinkGraph]) -> None:
    graph = open_graph()
    retriever = ThinkGraphRetriever(graph=graph, method="hybrid", top_k=2)
    sync_docs = retriever.invoke(QUESTION)  # (called inside a running loop, as in a notebook)
    async_docs = await retriever.ainvoke(QUESTION)
    assert [(d.page_content, d.metadata) for d in async_docs] == [(d.page_content, d.metadata) for d in sync_docs]
    assert len(async_docs) == 2
    for doc in async_docs:
        check_passage(doc, graph, "hybrid")
    chain = retriever | RunnableLambda(lambda docs: [d.metadata["doc_id"] for d in docs])
    batched = await chain.abatch([QUESTION, "Where is the Skarn Lighthouse?"])
    assert batched[0] == [d.metadata["doc_id"] for d in sync_docs] and "skarn-lighthouse.txt" in batched[1]


def _one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(exc.value)
    assert message and "\n" not in message
    return message


async def test_bad_method_option_and_missing_index_are_one_line_errors(open_graph: Callable[..., ThinkGraph],
                                                                       tmp_path: Path) -> None:
    graph = open_graph()
    with pytest.raises(UnknownMethodError) as bad:
        ThinkGraphRetriever(graph=graph, method="nope")
    assert _one_line(bad).startswith("unknown method 'nope'; valid methods: none, naive, ppr")
    with pytest.raises(ConfigError) as option:
        ThinkGraphRetriever(graph=graph, method="ppr", options={"damping": 2.0})
    assert _one_line(option).startswith("ppr option damping")
    missing = tmp_path / "missing.db"
    with pytest.raises(IndexFileError) as opened:
        ThinkGraphRetriever.from_index(missing)
    assert _one_line(opened).startswith(f"no index at {missing}")
    # a ThinkGraph made for a path that holds no index: the error comes through invoke, in a chain too
    chain = ThinkGraphRetriever(graph=ThinkGraph(missing)) | RunnableLambda(len)
    with pytest.raises(IndexFileError) as invoked:
        chain.invoke(QUESTION)
    with pytest.raises(IndexFileError) as awaited:
        await chain.ainvoke(QUESTION)
    assert _one_line(invoked) == _one_line(awaited) and not missing.exists()


def test_a_missing_framework_names_the_extra_to_install() -> None:
    with pytest.raises(ImportError) as missing:
        require("langchain_core_not_installed", "langchain")
    assert _one_line(missing) == ("thinkgraph.integrations.langchain needs langchain_core_not_installed: "
                                  "pip install 'thinkgraph[langchain]' (from a source checkout: "
                                  "pip install -e '.[langchain]')")
