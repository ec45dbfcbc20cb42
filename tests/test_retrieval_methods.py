"""Evidence retrieval and the methods none / naive / ppr, with the scripted LLM."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import FIXTURES, SAMPLE_CORPUS, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.errors import ConfigError, InputError, UnknownMethodError
from thinkgraph.llm.echo import echoes_instructions
from thinkgraph.methods.reader import READER_INSTRUCTION
from thinkgraph.methods.replies import missing_citations, split_citations
from thinkgraph.methods.synthesis import fit_passages
from thinkgraph.retrieval.evidence import ScoredPassage
from thinkgraph.testing import ScriptedBackend
from thinkgraph.tokens import TokenCounter


@pytest.fixture
def sample_index(tmp_path: Path, settings: Settings) -> Path:
    path = tmp_path / "sample.db"
    with ThinkGraph(path, settings=settings, embedder=HashEmbedder()) as tg:
        tg.index([SAMPLE_CORPUS])
    return path


def _open(path: Path, settings: Settings, backend: ScriptedBackend | None = None) -> ThinkGraph:
    return ThinkGraph.open(path, settings=settings, embedder=HashEmbedder(), backend=backend)


def test_without_llm_ask_returns_evidence_with_provenance_and_paths(sample_index: Path, settings: Settings) -> None:
    with _open(sample_index, settings) as tg:
        answer = tg.ask("Who reassembled the Morrow Refractor in 1946?", method="ppr")
        assert answer.status == "evidence_only" and answer.text is None
        assert "needs an LLM endpoint" in answer.message
        assert len(answer.citations) == 4  # the sample has 4 chunks; top_k 5
        for c in answer.citations:
            source = (SAMPLE_CORPUS / c.doc_id).read_text(encoding="utf-8")
            assert source[c.start:c.end].startswith(c.quote[:50])
        assert answer.evidence.path_texts and answer.evidence.paths
        assert any(n.type == "entity" for n in answer.evidence.nodes)
        assert answer.trace[0].agent == "retriever" and answer.cost.calls == 0


def test_graph_retrieval_reaches_passages_dense_retrieval_misses(tmp_path: Path, settings: Settings) -> None:
    # The answer passage (b) shares no word with the question but is linked to it through the graph;
    # the noise passages share the question's words but name no entity.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Zorvath Quell commanded the Ember Fleet.", "utf-8")
    (docs / "b.txt").write_text("The Ember Fleet sailed from Harrowgate harbour.", "utf-8")
    for i in range(6):
        (docs / f"noise{i}.txt").write_text(f"zorvath quell's fleet: where did it sail from, asks riddle {i}?", "utf-8")
    settings.retrieval.passage_weight = 0.01  # let the graph, not the dense scores, dominate
    with ThinkGraph(tmp_path / "g.db", settings=settings, embedder=HashEmbedder()) as tg:
        tg.index([docs])
        graph_ids = [c.doc_id for c in tg.ask("Where did Zorvath Quell's fleet sail from?", top_k=3).citations]
        dense_ids = [c.doc_id for c in tg.ask("Where did Zorvath Quell's fleet sail from?", method="naive",
                                              top_k=3).citations]
    assert "b.txt" in graph_ids
    assert "b.txt" not in dense_ids


def test_naive_and_ppr_answer_with_citations(sample_index: Path, settings: Settings) -> None:
    backend = ScriptedBackend.of(["Lena Sorensen reassembled it [2].", "Joseph Okafor [1][3]"])
    with _open(sample_index, settings, backend) as tg:
        naive = tg.ask("Who reassembled the Morrow Refractor?", method="naive", top_k=3)
        assert naive.status == "answered" and naive.text == "Lena Sorensen reassembled it."
        assert len(naive.citations) == 1
        prompt = backend.requests[0].messages[0]["content"]
        assert "[1]" in prompt and "[3]" in prompt and "[4]" not in prompt
        assert "Who reassembled the Morrow Refractor?" in prompt
        assert naive.citations[0].chunk_id in prompt or naive.citations[0].quote[:40] in prompt
        ppr = tg.ask("Who trained Lena Sorensen?", method="ppr", top_k=3)
        assert ppr.text == "Joseph Okafor" and len(ppr.citations) == 2
        assert "Entity paths" in backend.requests[1].messages[0]["content"]
        assert ppr.cost.calls == 1 and ppr.cost.prompt_tokens > 0
        assert [s.agent for s in ppr.trace] == ["retriever", "responder", "llm"]


def test_citation_numbers_that_name_no_passage_are_dropped_and_traced(sample_index: Path,
                                                                     settings: Settings) -> None:
    with _open(sample_index, settings, ScriptedBackend.of(["[5] Joseph Okafor trained her."])) as tg:
        answer = tg.ask("Who trained Lena Sorensen?", method="naive", top_k=3)
    assert answer.status == "answered" and answer.text == "Joseph Okafor trained her."
    assert len(answer.citations) == 3  # no valid number: the answer rests on every passage shown
    step = next(s for s in answer.trace if s.agent == "responder")
    assert step.outputs["missing_citations"] == [5] and step.outputs["reply"].startswith("[5]")


def test_a_reply_that_echoes_the_prompt_is_a_failure(sample_index: Path, settings: Settings) -> None:
    echo = ("Answer the question using only the numbered passages below (the question is at the end). "
            "The answer may need facts")
    with _open(sample_index, settings, ScriptedBackend.of([echo])) as tg:
        answer = tg.ask("Who trained Lena Sorensen?", method="ppr")
    assert answer.status == "failed" and answer.text is None and "repeated the prompt" in answer.message
    assert answer.citations  # what was retrieved stays visible


def test_echo_detection_needs_eight_words_of_the_instructions_in_a_row() -> None:
    template = READER_INSTRUCTION
    assert echoes_instructions("Sure! answer the question using only the numbered passages below: ok", template)
    assert not echoes_instructions("Joseph Okafor trained her, using only the passages [1].", template)
    assert not echoes_instructions("", template) and not echoes_instructions("anything", "{only} placeholders")
    assert split_citations("Paris [1][7]", ["a", "b"]) == ("Paris", ["a"])
    assert missing_citations("Paris [1][7] [0]", 2) == [0, 7]


def test_unknown_reply_is_an_abstention(sample_index: Path, settings: Settings) -> None:
    with _open(sample_index, settings, ScriptedBackend.of(["Unknown."])) as tg:
        answer = tg.ask("What is the airspeed of a swallow?", method="naive")
        assert answer.status == "abstained" and len(answer.citations) > 0


def test_none_method(sample_index: Path, settings: Settings) -> None:
    backend = ScriptedBackend.of(["Paris"])
    with _open(sample_index, settings, backend) as tg:
        answer = tg.ask("Capital of France?", method="none")
        assert answer.text == "Paris" and answer.citations == [] and answer.cost.calls == 1
        assert "Capital of France?" in backend.requests[0].messages[0]["content"]
    with _open(sample_index, settings) as tg, pytest.raises(ConfigError, match="needs an LLM"):
        tg.ask("Capital of France?", method="none")


def test_unknown_method_and_empty_question(sample_index: Path, settings: Settings) -> None:
    with _open(sample_index, settings) as tg:
        with pytest.raises(UnknownMethodError, match="valid methods: none, naive, ppr"):
            tg.ask("q", method="magic")
        with pytest.raises(InputError, match="empty"):
            tg.ask("   ")


def test_answer_prompt_fits_small_context_window(sample_index: Path, settings: Settings) -> None:
    settings.llm.context_window = 700
    settings.llm.max_tokens = 100
    backend = ScriptedBackend.of(["Kestrel Bay [1]"])
    with _open(sample_index, settings, backend) as tg:
        answer = tg.ask("Where is the observatory?", method="naive")
        responder = next(s for s in answer.trace if s.agent == "responder")
        assert responder.inputs["left_out"] > 0 and len(responder.inputs["passages"]) >= 1


def test_fit_passages_keeps_rank_order_within_budget() -> None:
    counter = TokenCounter()
    ps = [ScoredPassage(f"c{i}", "d", "", "word " * 50, 1.0) for i in range(5)]
    assert [p.chunk_id for p in fit_passages(ps, 130, counter)] == ["c0", "c1"]
    assert [p.chunk_id for p in fit_passages(ps, 10, counter)] == ["c0"]  # always at least one


def test_openie_graph_retrieval_uses_triplet_seeds(tmp_path: Path, settings: Settings) -> None:
    with ThinkGraph(tmp_path / "o.db", settings=settings, embedder=HashEmbedder()) as tg:
        tg.index([FIXTURES / "corpus_small.jsonl"], openie=FIXTURES / "openie_sample.jsonl")
        evidence = tg.ask("Who trained Lena Sorensen?", top_k=2)
        names = [n.text for n in evidence.evidence.nodes if n.type == "entity"]
        assert "Joseph Okafor" in names or "Lena Sorensen" in names
        assert evidence.citations[0].doc_id == "p2"


def test_graph_evidence_numbers_its_passages_as_the_answer_cites_them(sample_index: Path, settings: Settings) -> None:
    """With an LLM the answer cites some of the passages it was shown, numbered from 1 as cited; a path
    in the graph evidence must name its passage by that number, and paths to passages it does not cite
    are left out (helper-11 saw [1]-[4] under an answer citing one passage)."""
    question = "Who reassembled the Morrow Refractor in 1946?"
    with _open(sample_index, settings) as tg:
        shown = tg.ask(question, method="ppr")  # without an LLM: every passage, in retrieval order
    numbered = {text.split(" ", 1)[0]: text.split(" ", 1)[1] for text in shown.evidence.path_texts}
    assert len(numbered) >= 2, "the sample needs paths to two passages for this test"
    second = int(sorted(numbered, key=lambda n: int(n.strip("[]")))[1].strip("[]"))
    backend = ScriptedBackend([f"Answer: Tomas Reyes [{second}]"])
    with _open(sample_index, settings, backend) as tg:
        answer = tg.ask(question, method="ppr")
    assert [c.chunk_id for c in answer.citations] == [shown.citations[second - 1].chunk_id]
    assert answer.evidence.path_texts == [f"[1] {numbered[f'[{second}]']}"]
    assert len(answer.evidence.paths) == 1
