"""The view of a changed index extends the last revision's HNSW graph of the passages and its BM25
term counts instead of building them (retrieval/earlier.py), only from this index's own revisions,
and never answers with a removed passage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from support import HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.embed.manifest import node_embedding_text
from thinkgraph.embed.vector_index import HNSW_SUFFIX, VectorIndex, extended_beside
from thinkgraph.models import NodeType, SourceDocument
from thinkgraph.retrieval import lexical, views
from thinkgraph.retrieval.lexical import LexicalIndex
from thinkgraph.retrieval.view_cache import ViewCache

PASSAGES = [SourceDocument(id=f"p{i}", title=f"Harbour {i}", text=f"Harbour {i} lies on the coast of Vale {i % 7}; "
                           f"its lighthouse keeper is Mara {i}.", source="t") for i in range(40)]


def _settings() -> Settings:
    settings = Settings()
    settings.embedding.ann_threshold = 2  # HNSW for the passages of a small corpus
    return settings


def test_a_change_extends_the_last_graph_and_removed_passages_never_come_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    with ThinkGraph(tmp_path / "h.db", settings=_settings(), embedder=HashEmbedder()) as tg:
        tg.add_documents(PASSAGES[:30])
        assert tg.view.vectors(NodeType.CHUNK).origin == "built"
        tg.add_documents(PASSAGES[30:])
        assert tg.view.vectors(NodeType.CHUNK).origin == "extended"  # additions: a plain graph again
        tg.remove_documents(["p3", "p4"])
        vectors = tg.view.vectors(NodeType.CHUNK)
        assert vectors.origin == "extended" and len(vectors) == 38
        graph, labels = extended_beside(Path(f"{vectors.vectors.base.filename}{HNSW_SUFFIX}"))  # type: ignore[union-attr]
        assert graph.is_file() and labels.is_file()
        for question in ("Where is Harbour 3?", "Who keeps the lighthouse of Harbour 4?", "Harbour 35 lies where?"):
            answer = tg.retrieve(question, "naive")
            assert answer.citations and not {c.doc_id for c in answer.citations} & {"p3", "p4"}
        exact = VectorIndex(vectors.ids, np.asarray(vectors.vectors), ann_threshold=10**9)
        for passage in PASSAGES:  # the new passages are found as exact search finds them
            query = tg.embedder.embed([passage.text])[0]
            found, expected = vectors.search(query, 5), exact.search(query, 5)
            assert [round(s, 5) for _, s in found] == [round(s, 5) for _, s in expected]  # (ties in any order)
            assert not {i for i, _ in found} - set(vectors.ids)


def test_only_the_same_index_s_revisions_are_extended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    with ThinkGraph(tmp_path / "one.db", settings=_settings(), embedder=HashEmbedder()) as one:
        one.add_documents(PASSAGES[:20])
        one_folder = one.view.cache.folder  # type: ignore[union-attr]
    with ThinkGraph(tmp_path / "two.db", settings=_settings(), embedder=HashEmbedder()) as two:
        two.add_documents(PASSAGES[20:])
        assert two.view.vectors(NodeType.CHUNK).origin == "built"
        cache = two.view.cache
        assert isinstance(cache, ViewCache) and one_folder not in cache.earlier_folders()
        two.add_documents(PASSAGES[:2])
        assert two.view.vectors(NodeType.CHUNK).origin == "extended"


def test_a_change_tokenises_only_the_passages_it_adds_and_bm25_equals_a_fresh_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THINKGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(views, "TEXT_BATCH", 2)  # texts read and tokenised two at a time
    tokenised: list[str] = []
    real = lexical.tokenize
    monkeypatch.setattr(lexical, "tokenize", lambda texts: tokenised.extend(texts) or real(texts))
    edited = SourceDocument(id="p5", title="Harbour 5", text="Harbour 5 was renamed Skarnholm by the optician Ilse.",
                            source="t")
    with ThinkGraph(tmp_path / "h.db", settings=_settings(), embedder=HashEmbedder()) as tg:
        tg.add_documents(PASSAGES[:30])
        tg.view.prepare()
        tokenised.clear()
        tg.remove_documents(["p3"])
        tg.add_documents([*PASSAGES[30:32], edited])
        tg.view.prepare()
        passages = tg.view.lexical(NodeType.CHUNK)
        fresh = [p.id for t in tokenised for p in [*PASSAGES, edited] if p.text in t]
        assert sorted(fresh) == ["p30", "p31", "p5"]  # the new and the edited passages, no other
        texts = {n.id: node_embedding_text(n) for n in tg.store.get_nodes(list(passages.ids))}
        whole = LexicalIndex.build(list(passages.ids), [texts[i] for i in passages.ids])
        for question in ("Where is Harbour 3?", "the optician Ilse", "Skarnholm", "lighthouse keeper Mara 31"):
            assert np.allclose(passages.scores(question), whole.scores(question), atol=1e-6)
        assert not passages.scores("Skarnholm")[[i for i, pid in enumerate(passages.ids)
                                                 if edited.text not in texts[pid]]].any()


def _torn(item: Path) -> None:
    (item / "term.npy").write_bytes(b"torn")


def _terms_out_of_range(item: Path) -> None:
    np.save(item / "term.npy", np.full(np.load(item / "term.npy").shape, 10**6, dtype=np.int32))


def _pointer_past_the_end(item: Path) -> None:
    ptr = np.load(item / "ptr.npy")
    ptr[-1] += 5
    np.save(item / "ptr.npy", ptr)


def _counts_tripled(item: Path) -> None:
    np.save(item / "count.npy", np.load(item / "count.npy") * 3)


@pytest.mark.parametrize("damage", [_torn, _terms_out_of_range, _pointer_past_the_end, _counts_tripled])
def test_a_damaged_earlier_bm25_is_built_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage) -> None:  # noqa: ANN001
    monkeypatch.setenv("THINKGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    tokenised: list[str] = []
    real = lexical.tokenize
    monkeypatch.setattr(lexical, "tokenize", lambda texts: tokenised.extend(texts) or real(texts))
    with ThinkGraph(tmp_path / "h.db", settings=_settings(), embedder=HashEmbedder()) as tg:
        tg.add_documents(PASSAGES[:20])
        tg.view.prepare()
        item = tg.view.cache.folder / f"lexical-{NodeType.CHUNK}"  # type: ignore[union-attr]
        damage(item)
        tokenised.clear()
        tg.add_documents(PASSAGES[20:25])
        passages = tg.view.lexical(NodeType.CHUNK)
        again = {p.id for t in tokenised for p in PASSAGES if p.text in t}
        assert again == {p.id for p in PASSAGES[:25]}  # not extended from damaged counts: every passage again
        texts = {n.id: node_embedding_text(n) for n in tg.store.get_nodes(list(passages.ids))}
        whole = LexicalIndex.build(list(passages.ids), [texts[i] for i in passages.ids])
        assert np.allclose(passages.scores("lighthouse keeper Mara 22"), whole.scores("lighthouse keeper Mara 22"))
