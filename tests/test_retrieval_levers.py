"""The retrieval levers on their own: BM25 against the Lucene formula, score fusion, question entity
linking, seeds, and the `hybrid` and `ppr` methods' options."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from support import HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.errors import ConfigError
from thinkgraph.models import NodeType
from thinkgraph.retrieval import seeds as seeding
from thinkgraph.retrieval.fusion import fuse_ranks, hybrid_scores, min_max, rank_score
from thinkgraph.retrieval.lexical import BM25_B, BM25_K1, LexicalIndex
from thinkgraph.retrieval.linking import EntityLinker, link_key

DOCS = ["the harbour of Harrowgate", "a fleet sailed from the harbour", "the fleet of Zorvath Quell"]


def lucene_bm25(query_terms: list[str], docs: list[list[str]]) -> list[float]:
    """Reference: Lucene's BM25 written out (idf = ln(1 + (N - df + 0.5) / (df + 0.5)); since Lucene 8
    the term-frequency part has no (k1 + 1) factor, which leaves the ranking unchanged)."""
    n = len(docs)
    avgdl = sum(map(len, docs)) / n
    out = []
    for doc in docs:
        score = 0.0
        for term in query_terms:
            df = sum(term in d for d in docs)
            tf = doc.count(term)
            if tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf / (tf + BM25_K1 * (1 - BM25_B + BM25_B * len(doc) / avgdl))
        out.append(score)
    return out


def test_bm25_matches_the_lucene_formula_on_stemmed_terms() -> None:
    index = LexicalIndex.build(["a", "b", "c"], DOCS)
    # Lucene's stopwords ("the", "a", "of") dropped, Snowball stems ("sailed" -> "sail").
    stemmed = [["harbour", "harrowg"], ["fleet", "sail", "from", "harbour"], ["fleet", "zorvath", "quell"]]
    expected = lucene_bm25(["fleet", "sail", "harbour"], stemmed)
    assert np.allclose(index.scores("Which fleets sail to a harbour?"), expected, atol=1e-5)
    assert index.scores("Zorvath").argmax() == 2


def test_bm25_without_known_terms_or_texts_is_all_zero() -> None:
    assert not LexicalIndex.build(["a", "b", "c"], DOCS).scores("unrelated words only").any()
    assert LexicalIndex.build([], []).scores("fleet").shape == (0,)
    assert not LexicalIndex.build(["a"], [""]).scores("fleet").any()


def test_fusion_helpers() -> None:
    assert min_max(np.array([2.0, 4.0, 3.0])).tolist() == [0.0, 1.0, 0.5]
    assert min_max(np.array([3.0, 3.0])).tolist() == [1.0, 1.0]
    assert rank_score(np.array([0.1, 0.9, 0.5])).tolist() == pytest.approx([61 / 63, 1.0, 61 / 62])
    dense = np.array([0.2, 0.6, 0.4])
    assert hybrid_scores(dense, np.zeros(3), 0.7).tolist() == pytest.approx(min_max(dense).tolist())
    fused = hybrid_scores(dense, np.array([5.0, 0.0, 0.0]), 0.7)
    assert fused.tolist() == pytest.approx([0.3, 0.7, 0.35])
    both = fuse_ranks([np.array([1.0, 0.0]), np.array([0.0, 1.0])], [0.5, 0.5])
    assert both[0] == pytest.approx(both[1])
    with pytest.raises(ValueError):
        fuse_ranks([dense], [])


def test_linker_takes_the_longest_exact_name_and_fuzzy_name_like_phrases() -> None:
    linker = EntityLinker(["e1", "e2", "e3", "e4", "e5", "e6", "e7"],
                          ["Barry Wesson", "World Series", "World", "Houston Astros", "The", "team", "the world"])
    question = "Did Barry Wesson's team play the Huston Astros in the World Series?"
    links = {link.entity_id: link for link in linker.link(question)}
    # "World" and "the world" overlap the more name-like "World Series"; "The" is no name; "team" is
    # a type word, not written as a name, so not linked (HippoRAG 1 links named entities).
    assert set(links) == {"e1", "e2", "e4"}
    assert links["e1"].confidence == 1.0 and 0.9 <= links["e4"].confidence < 1.0
    assert {link.entity_id for link in linker.link(question.lower())} >= {"e1", "e2", "e6"}  # no case signal
    assert linker.link("nothing named here") == [] and len(linker) == 6
    assert EntityLinker([], []).link("Barry Wesson") == []
    assert link_key("  Barry  Wesson's  TEAM!") == "barry wesson team"


@pytest.fixture
def bridge_index(tmp_path: Path, settings: Settings) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Zorvath Quell commanded the Ember Fleet.", "utf-8")
    (docs / "b.txt").write_text("The Ember Fleet sailed from Harrowgate harbour.", "utf-8")
    (docs / "c.txt").write_text("Orla Venn painted lighthouses near Dunmere.", "utf-8")
    path = tmp_path / "g.db"
    with ThinkGraph(path, settings=settings, embedder=HashEmbedder()) as tg:
        tg.index([docs])
    return path


def test_seeds_link_question_entities_and_bridge_to_the_next_hop(bridge_index: Path, settings: Settings) -> None:
    with ThinkGraph.open(bridge_index, settings=settings, embedder=HashEmbedder()) as tg:
        view = tg.view
        names = {n.id: n.text for n in tg.store.iter_nodes(NodeType.ENTITY)}
        linked = seeding.linked_seeds(view, view.entity_linker.link("Where did Zorvath Quell's fleet sail from?"))
        assert [names[e] for e in linked] == ["Zorvath Quell"]
        first = next(c for c in view.vectors(NodeType.CHUNK).ids
                     if set(linked) <= set(view.passage_entities.entities(c)))
        bridges = seeding.bridge_seeds(view, [(first, 1.0)], set(linked))
        assert "Ember Fleet" in {names[e] for e in bridges} and not set(bridges) & set(linked)
        assert seeding.merge(({"x": 1.0}, 1.0), ({"x": 1.0, "y": 2.0}, 0.5)) == {"x": 1.5, "y": 1.0}


def test_hybrid_and_ppr_options_through_the_method_registry(bridge_index: Path, settings: Settings) -> None:
    with ThinkGraph.open(bridge_index, settings=settings, embedder=HashEmbedder()) as tg:
        hybrid = tg.ask("Where did the Ember Fleet sail from?", method="hybrid", top_k=2)
        assert hybrid.citations[0].doc_id == "b.txt" and len(hybrid.citations) == 2
        assert hybrid.trace[0].action == "retrieve.hybrid"
        question = "Where did Zorvath Quell's fleet sail from?"
        ranked = [c.doc_id for c in tg.ask(question, method="ppr", top_k=3, bridge_passages=1).citations]
        assert set(ranked[:2]) == {"a.txt", "b.txt"}
        plain = tg.ask(question, method="ppr", top_k=3, lexical=False, link_entities=False, dense_mix=0.0)
        assert len(plain.citations) == 3
        linked_only = tg.ask(question, method="ppr", fact_seeds="never", bridge_passages=0)
        assert linked_only.trace[0].outputs["seeds"] == ["Zorvath Quell"]
        for bad in ("high", 1.5):
            with pytest.raises(ConfigError, match="ppr option damping"):
                tg.ask(question, method="ppr", damping=bad)
        with pytest.raises(ConfigError, match="ppr has no option no_such_lever; its options: .*damping"):
            tg.ask(question, method="ppr", no_such_lever=True)


def test_bm25_scores_are_bm25s_own() -> None:
    """The scores equal those of bm25s' own index of the same tokens (the independent reference), a
    repeated query term counting twice."""
    import bm25s

    from thinkgraph.retrieval.lexical import tokenize

    texts = ["the lighthouse keeper of Skarn", "a lens made for the lighthouse", "keeper keeper keeper", "", "Skarn"]
    index = LexicalIndex.build([f"p{i}" for i in range(len(texts))], texts)
    reference = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    reference.index(tokenize(texts), show_progress=False)
    for query in ("lighthouse keeper", "Skarn Skarn lens", "keeper", "nothing here"):
        known = [t for t in tokenize([query])[0] if t in reference.vocab_dict]
        expected = reference.get_scores(known) if known else np.zeros(len(texts))
        assert np.allclose(index.scores(query), expected)
