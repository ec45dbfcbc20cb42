"""The indexing run through the Python API: stages, resume, incremental updates, removal, failures."""

from __future__ import annotations

import json
import shutil
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from support import FIXTURES, SAMPLE_CORPUS, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.errors import EmbeddingMismatchError, LLMUnavailableError
from thinkgraph.index.resolve import resolve_entities
from thinkgraph.llm.backend import ChatRequest
from thinkgraph.models import DocStatus, Node
from thinkgraph.store.sqlite import SQLiteStore
from thinkgraph.testing import ScriptedBackend


def _tg(path: Path, settings: Settings, embedder: HashEmbedder | None = None, **kw: object) -> ThinkGraph:
    return ThinkGraph(path, settings=settings, embedder=embedder or HashEmbedder(), **kw)


def _extraction_reply(request: ChatRequest, *, described: bool = False) -> str:
    """A valid extraction naming the first two capitalised words of the chunk (``described``: its one
    relation carries a description, ToG-3 Fig. 11)."""
    text = request.messages[-1]["content"].split("## Text", 1)[1]
    words = [w.strip(".,") for w in text.split() if w[:1].isupper() and w not in ("Title:",)][:2]
    a, b = (words + ["Alpha", "Beta"])[:2]
    relation = {"source_entity": a, "target_entity": b, "relation": "relates to"}
    if described:
        relation["relationship_description"] = f"{a} is tied to {b} in the text."
    return json.dumps({"entities": [{"entity_name": a, "entity_type": "Thing"},
                                    {"entity_name": b, "entity_type": "Thing"}],
                       "relationships": [relation]})


def test_index_sample_corpus_without_llm(index_path: Path, settings: Settings) -> None:
    with _tg(index_path, settings) as tg:
        report = tg.index([SAMPLE_CORPUS])
        assert report.indexed == 4 and report.failed == 0 and not report.skipped
        stats = tg.stats()
        assert stats["documents"] == {"done": 4}
        assert stats["nodes"]["chunk"] == 4 and stats["nodes"]["entity"] > 20
        assert stats["edges"]["CO_OCCURS"] > 0 and stats["edges"]["CONTAINS"] > 0
        assert stats["nodes"]["community"] == report.communities > 0
        assert stats["embedding_model"] == "test:hash" and stats["extractor"] == "nolm"
        assert not tg.store.nodes_missing_vectors(["chunk", "entity", "community"])


def test_rerun_is_incremental(index_path: Path, settings: Settings, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE_CORPUS, corpus)
    with _tg(index_path, settings) as tg:
        tg.index([corpus])
        before = tg.store.count_nodes()
    embedder = HashEmbedder()
    with _tg(index_path, settings, embedder) as tg:
        again = tg.index([corpus])
        assert again.unchanged == 4 and again.indexed == 0 and embedder.calls == 0
        assert tg.store.count_nodes() == before
        (corpus / "extra.md").write_text("# Extra\nThe Velden Museum holds a clock by Lena Sorensen.", "utf-8")
        added = tg.index([corpus])
        assert added.indexed == 1 and added.unchanged == 4


def test_changed_document_is_replaced(index_path: Path, settings: Settings, tmp_path: Path) -> None:
    doc = tmp_path / "note.txt"
    doc.write_text("Oslo is the capital of Norway.", "utf-8")
    with _tg(index_path, settings) as tg:
        tg.index([doc])
        doc.write_text("Bergen is a city in Norway.", "utf-8")
        report = tg.index([doc])
        assert report.updated == 1 and report.indexed == 1
        names = {n.text for n in tg.store.iter_nodes("entity")}
        assert "Bergen" in names and "Oslo" not in names and "Norway" in names
        assert len(list(tg.store.iter_nodes("chunk"))) == 1


def test_a_new_title_is_an_update(index_path: Path, settings: Settings) -> None:
    """Passages are encoded and matched with their document's title: a title changed alone re-indexes
    the document, and the old title no longer finds it."""
    from thinkgraph.models import NodeType, SourceDocument

    text = "The Velden Museum holds a clock by Lena Sorensen."
    with _tg(index_path, settings) as tg:
        tg.add_documents([SourceDocument(id="d1", title="Quibbleskiff notes", text=text, source="t")])
        report = tg.add_documents([SourceDocument(id="d1", title="Museum clocks", text=text, source="t")])
        assert report.updated == 1 and report.indexed == 1
        again = tg.add_documents([SourceDocument(id="d1", title="Museum clocks", text=text, source="t")])
        assert again.unchanged == 1 and again.indexed == 0
        assert tg.store.get_document("d1").title == "Museum clocks"  # type: ignore[union-attr]
        passages = tg.view.lexical(NodeType.CHUNK)
        assert not passages.scores("Quibbleskiff").any() and passages.scores("clocks").any()


def test_remove_document_rebuilds_derived(index_path: Path, settings: Settings) -> None:
    with _tg(index_path, settings) as tg:
        tg.index([SAMPLE_CORPUS])
        skarn_only = [n for n in tg.store.iter_nodes("entity") if n.text == "Arne Vik"]
        shared = [n for n in tg.store.iter_nodes("entity") if n.text == "Ilse Brandt"]
        assert skarn_only and shared
        report = tg.remove_document("skarn-lighthouse.txt")
        assert report.nodes_removed > 0
        assert tg.store.get_node(skarn_only[0].id) is None
        assert tg.store.get_node(shared[0].id) is not None
        assert tg.store.get_meta("derived_stale") == "0"
        assert tg.stats()["documents"] == {"done": 3}
        members = {e.dst for e in tg.store.iter_edges(["SUMMARY_FOR"])}
        assert skarn_only[0].id not in members
        with pytest.raises(Exception, match="no document"):
            tg.remove_document("skarn-lighthouse.txt")


def test_duplicates_and_bad_files_are_counted(index_path: Path, settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Same text about Kestrel Bay.", "utf-8")
    (tmp_path / "b.txt").write_text("Same text about Kestrel Bay.", "utf-8")
    (tmp_path / "c.txt").write_bytes(b"\xff\xfe\x00binary")
    with _tg(index_path, settings) as tg:
        report = tg.index([tmp_path])
        assert report.indexed == 1 and len(report.skipped) == 2
        assert any("same content as document 'a.txt'" in s for s in report.skipped)
        assert any("binary" in s for s in report.skipped)


def test_llm_extraction_resumes_without_repeating_calls(index_path: Path, settings: Settings) -> None:
    settings.index.extractor = "llm"
    settings.index.summarize_communities = False
    settings.index.document_summaries = "first_sentences"
    corpus = FIXTURES / "corpus_small.jsonl"
    gone = LLMUnavailableError("endpoint went away")
    first = ScriptedBackend(script=[_extraction_reply, gone, gone])
    with _tg(index_path, settings, backend=first) as tg, pytest.raises(LLMUnavailableError):
        tg.index([corpus])
    done_after_crash = len(first.requests)
    second = ScriptedBackend(script=[_extraction_reply] * 10)
    with _tg(index_path, settings, backend=second) as tg:
        report = tg.index([corpus])
        assert tg.stats()["documents"] == {"done": 3}
        assert report.indexed == 2 and report.unchanged == 1  # one document finished before the crash
    # each chunk got exactly one successful call across the two runs; the failed ones are asked again
    assert done_after_crash == 3 and len(second.requests) == 2
    third = ScriptedBackend()
    with _tg(index_path, settings, backend=third) as tg:
        assert tg.index([corpus]).unchanged == 3 and not third.requests


def test_budget_stops_indexing_cleanly_and_resume_finishes(index_path: Path, settings: Settings) -> None:
    settings.index.extractor = "llm"
    settings.index.summarize_communities = False
    settings.index.document_summaries = "first_sentences"
    settings.llm.budget_calls = 1
    corpus = FIXTURES / "corpus_small.jsonl"
    first = ScriptedBackend(script=[_extraction_reply] * 3)
    with _tg(index_path, settings, backend=first) as tg:
        report = tg.index([corpus])
        assert report.stopped and "budget" in report.stopped
    settings.llm.budget_calls = None
    second = ScriptedBackend(script=[_extraction_reply] * 3)
    with _tg(index_path, settings, backend=second) as tg:
        tg.index([corpus])
        assert tg.stats()["documents"] == {"done": 3}
    assert len(first.requests) + len(second.requests) == 3


def test_malformed_llm_output_is_counted_and_retried_next_run(index_path: Path, settings: Settings) -> None:
    settings.index.extractor = "llm"
    settings.index.summarize_communities = False
    settings.index.document_summaries = "first_sentences"
    settings.llm.max_repairs = 1
    corpus = FIXTURES / "corpus_small.jsonl"

    def reply(request: ChatRequest) -> str:
        return "not json" if "Skarn" in request.messages[0]["content"] else _extraction_reply(request)

    with _tg(index_path, settings, backend=ScriptedBackend(script=[reply] * 10)) as tg:
        report = tg.index([corpus])
        assert report.extraction_failures == 1
        assert tg.stats()["extraction_failures"] == {"extract": 1}
        assert tg.store.get_document("p3").status == DocStatus.FAILED  # its only chunk failed
        assert tg.store.get_document("p1").status == DocStatus.DONE
    fixed = ScriptedBackend(script=[_extraction_reply] * 3)
    with _tg(index_path, settings, backend=fixed) as tg:
        tg.index([corpus])
        assert tg.stats()["extraction_failures"] == {} and len(fixed.requests) == 1


def test_embedding_model_mismatch_is_refused(index_path: Path, settings: Settings) -> None:
    with _tg(index_path, settings) as tg:
        tg.index([FIXTURES / "corpus_small.jsonl"])
    with _tg(index_path, settings, HashEmbedder(name="other-model")) as tg:
        with pytest.raises(EmbeddingMismatchError, match="built with embedding model 'test:hash'"):
            tg.index([FIXTURES / "corpus_small.jsonl"])
        with pytest.raises(EmbeddingMismatchError):
            tg.ask("anything")


def test_openie_and_triple_import(index_path: Path, settings: Settings) -> None:
    with _tg(index_path, settings) as tg:
        report = tg.index([FIXTURES / "corpus_small.jsonl"], openie=FIXTURES / "openie_sample.jsonl",
                          triples=[FIXTURES / "triples.tsv"])
        assert report.indexed == 4  # three passages and the triple file's own document
        preds = {e.props["predicate"] for e in tg.store.iter_edges(["OPENREL"])}
        assert {"founded", "trained", "ran", "located in"} <= preds
        assert tg.store.get_meta("extractor") == "import"
        assert len(report.skipped) == 4  # 3 OpenIE problems, 1 bad TSV row


def test_synonym_edges_from_embedding_cosine(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    store.add_nodes([Node(f"ent:{i}", "entity", name) for i, name in enumerate(["NYC", "New York", "Paris"])])
    vecs = np.array([[1, 0, 0], [0.95, 0.31, 0], [0, 0, 1]], dtype=np.float32)
    store.put_vectors(["ent:0", "ent:1", "ent:2"], vecs / np.linalg.norm(vecs, axis=1, keepdims=True))
    assert resolve_entities(store, 0.9) == 1
    (edge,) = list(store.iter_edges(["SYNONYM"]))
    assert (edge.src, edge.dst) == ("ent:0", "ent:1") and edge.props["cosine"] >= 0.9
    assert resolve_entities(store, 0.99) == 0 and not list(store.iter_edges(["SYNONYM"]))


def test_community_summaries_with_llm_are_cached(index_path: Path, settings: Settings) -> None:
    settings.index.document_summaries = "first_sentences"
    backend = ScriptedBackend(rules=[("Summary:", "A group about the observatory and its people.")])
    with _tg(index_path, settings, backend=backend) as tg:
        report = tg.index([SAMPLE_CORPUS])
        comms = list(tg.store.iter_nodes("community"))
        assert comms and all(c.props["summarized"] for c in comms) and report.communities == len(comms)
        assert comms[0].text == "A group about the observatory and its people."
        calls = len(backend.requests)
        assert calls == len(comms)
        assert tg.stats()["llm_usage"]["index.community_summary"]["calls"] == calls
        tg.store.set_meta("derived_stale", "1")
        tg.index([SAMPLE_CORPUS])
        assert len(backend.requests) == calls  # summaries of unchanged communities are kept


def test_a_refused_call_skips_one_chunk_only(index_path: Path, settings: Settings) -> None:
    from thinkgraph.errors import LLMError

    settings.index.extractor = "llm"
    settings.index.summarize_communities = False
    settings.index.document_summaries = "first_sentences"
    backend = ScriptedBackend(script=[_extraction_reply] * 2,
                              rules=[("Skarn is an island", LLMError("HTTP 400: context length exceeded"))])
    with _tg(index_path, settings, backend=backend) as tg:
        report = tg.index([FIXTURES / "corpus_small.jsonl"])
        assert report.extraction_failures == 1 and report.indexed == 2 and report.failed == 1
        assert "context length" in tg.store.failures("extract")[0][2]
        (example,) = tg.stats()["failure_examples"]  # what `inspect` shows beside the counts
        assert example["stage"] == "extract" and "context length" in example["message"]


def test_document_summaries_from_llm_or_first_sentences(index_path: Path, settings: Settings,
                                                        tmp_path: Path) -> None:
    settings.index.summarize_communities = False
    backend = ScriptedBackend(rules=[("Summarise the document", "A note about Kestrel Bay's harbour.")])
    with _tg(index_path, settings, backend=backend) as tg:
        tg.index([FIXTURES / "corpus_small.jsonl"])
        docs = {n.props["doc_id"]: n for n in tg.store.iter_nodes("document")}
        assert docs["p1"].text == "A note about Kestrel Bay's harbour." and len(backend.requests) == 3
        assert "Title: Harbor Hill Observatory" in backend.requests[0].messages[0]["content"]
        assert not tg.store.nodes_missing_vectors(["document"])
    with _tg(tmp_path / "plain.db", settings) as tg:  # no LLM: title and opening sentences
        tg.index([FIXTURES / "corpus_small.jsonl"])
        docs = {n.props["doc_id"]: n for n in tg.store.iter_nodes("document")}
        assert docs["p3"].text == "Skarn is an island reached by ferry from Kestrel Bay."  # title already there
        assert docs["p1"].text.startswith("Harbor Hill Observatory: The Harbor Hill Observatory was founded")


def test_community_summaries_read_relation_descriptions(index_path: Path, settings: Settings) -> None:
    """ToG-3 Fig. 12: a community's summary prompt lists its relations as source -> target ->
    relation -> description; the description also rides on the OPENREL edge."""
    settings.index.extractor = "llm"
    settings.index.document_summaries = "first_sentences"
    backend = ScriptedBackend(rules=[("Summary:", "A group."), ("## Text", partial(_extraction_reply, described=True))])
    with _tg(index_path, settings, backend=backend) as tg:
        tg.index([FIXTURES / "corpus_small.jsonl"])
        edges = list(tg.store.iter_edges(["OPENREL"]))
        assert edges and all(e.props["description"].endswith("in the text.") for e in edges)
        prompts = [r.messages[-1]["content"] for r in backend.requests if "Summary:" in r.messages[-1]["content"]]
        described = [line for p in prompts for line in p.splitlines() if " -> relates to -> " in line]
        assert described and all(line.endswith("in the text.") for line in described)
        fallback = [c.text for c in tg.store.iter_nodes("community") if not c.props["summarized"]]
        assert all("->" not in text for text in fallback)  # the model-free text keeps "A p B"


def test_summaries_that_echo_their_prompt_are_failures_with_the_model_free_text(index_path: Path,
                                                                               settings: Settings) -> None:
    """Gemma 3 270M answered a community's summary prompt with the prompt itself; that is no summary:
    counted as a failure, the community keeps the model-free description, a document its first sentences."""
    from thinkgraph.index.communities import SUMMARY_PROMPT
    from thinkgraph.index.summaries import DOC_SUMMARY_PROMPT

    echo = ScriptedBackend(rules=[("Summarise the document", DOC_SUMMARY_PROMPT.split("\n\n", 1)[0]),
                                  ("Summary:", SUMMARY_PROMPT.split("{", 1)[0])])
    with _tg(index_path, settings, backend=echo) as tg:
        report = tg.index([FIXTURES / "corpus_small.jsonl"])
        comms = list(tg.store.iter_nodes("community"))
        assert comms and report.summary_failures == len(comms)
        assert not any(c.props["summarized"] for c in comms) and all(c.text.startswith("Group of") for c in comms)
        docs = {n.props["doc_id"]: n for n in tg.store.iter_nodes("document")}
        assert docs["p1"].text.startswith("Harbor Hill Observatory: The Harbor Hill Observatory was founded")
        assert len(tg.store.failures("document_summary")) == 3
        calls = len(echo.requests)
        tg.store.set_meta("derived_stale", "1")
        again = tg.index([FIXTURES / "corpus_small.jsonl"])  # echoes were not cached: the summaries are asked again
        assert len(echo.requests) == calls + len(comms) and again.summary_failures == len(comms)
