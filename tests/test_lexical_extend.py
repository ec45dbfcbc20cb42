"""BM25 kept as term counts (retrieval/bm25_postings.py): a new revision's index extended from the last
one's by the texts it adds equals the index built from all its texts, and both equal bm25s' own."""

from __future__ import annotations

import random
from pathlib import Path

import bm25s
import numpy as np
import pytest

from thinkgraph.retrieval.id_table import IdTable
from thinkgraph.retrieval.lexical import BM25_B, BM25_K1, LexicalIndex, tokenize

WORDS = ["harbour", "fleet", "lighthouse", "keeper", "lens", "optician", "Skarn", "Vale", "Mara", "trained",
         "sailed", "north", "coast", "river", "the", "of", "a", "and", "1850", "1851", "Zorvath", "Quell"]
QUERIES = ["harbour keeper", "lens lens optician", "Skarn 1850", "the of", "Zorvath Quell river", "nothing"]


def _texts(rng: random.Random, n: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12))) for _ in range(n)]


def _bm25s_scores(texts: list[str], query: str) -> np.ndarray:
    reference = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    tokens = tokenize(texts)
    if not any(tokens):
        return np.zeros(len(texts))
    reference.index(tokens, show_progress=False)
    known = [t for t in tokenize([query])[0] if t in reference.vocab_dict]
    return np.asarray(reference.get_scores(known)) if known else np.zeros(len(texts))


def _extended(earlier_ids: list[str], earlier_texts: list[str], ids: list[str], texts: list[str]) -> LexicalIndex:
    """Extend the earlier index to ``ids``: rows of the same id and text are moved, the rest is fresh."""
    earlier = LexicalIndex.build(IdTable.of(earlier_ids), earlier_texts)
    now = {i: (row, t) for row, (i, t) in enumerate(zip(ids, texts, strict=True))}
    moved = np.array([now[i][0] if i in now and now[i][1] == t else -1
                      for i, t in zip(earlier_ids, earlier_texts, strict=True)], dtype=np.int64)
    covered = np.zeros(len(ids), dtype=bool)
    covered[moved[moved >= 0]] = True
    fresh = np.flatnonzero(~covered)
    return LexicalIndex.extend(earlier, moved, ids, fresh, [[texts[i] for i in fresh]])


@pytest.mark.parametrize("seed", range(12))
def test_an_extended_index_equals_one_built_whole_and_bm25s(seed: int) -> None:
    rng = random.Random(seed)
    earlier_ids = [f"p{i}" for i in range(rng.randint(0, 30))]
    earlier_texts = _texts(rng, len(earlier_ids))
    kept = [i for i in range(len(earlier_ids)) if rng.random() < 0.7]
    ids = [earlier_ids[i] for i in kept] + [f"n{i}" for i in range(rng.randint(0, 10))]
    texts = [earlier_texts[i] if rng.random() < 0.8 else _texts(rng, 1)[0] for i in kept]  # some edited
    texts += _texts(rng, len(ids) - len(kept))
    order = list(range(len(ids)))
    rng.shuffle(order)  # a revision's rows come in their own order
    ids, texts = [ids[i] for i in order], [texts[i] for i in order]
    extended = _extended(earlier_ids, earlier_texts, ids, texts)
    whole = LexicalIndex.build(ids, texts)
    assert len(extended.counts.terms) == len(whole.counts.terms)  # terms no text holds are dropped
    for query in QUERIES:
        assert np.allclose(extended.scores(query), whole.scores(query), atol=1e-6)
        assert np.allclose(whole.scores(query), _bm25s_scores(texts, query), atol=1e-5)


def test_extending_by_nothing_and_to_nothing() -> None:
    texts = ["harbour fleet", "the lighthouse keeper", "Skarn lens"]
    ids = ["a", "b", "c"]
    same = _extended(ids, texts, ids, texts)
    assert np.allclose(same.scores("harbour lens"), LexicalIndex.build(ids, texts).scores("harbour lens"))
    emptied = _extended(ids, texts, [], [])
    assert len(emptied) == 0 and len(emptied.counts.terms) == 0 and emptied.scores("harbour").shape == (0,)
    grown = _extended([], [], ids, texts)
    assert np.allclose(grown.scores("keeper"), LexicalIndex.build(ids, texts).scores("keeper"))


def test_saved_and_loaded(tmp_path: Path) -> None:
    ids = IdTable.of(["a", "b", "c"])
    index = LexicalIndex.build(ids, ["harbour fleet", "the lighthouse keeper", ""])
    index.save(tmp_path)
    loaded = LexicalIndex.load(ids, tmp_path)
    assert np.array_equal(loaded.scores("keeper fleet"), index.scores("keeper fleet"))
    assert isinstance(loaded.counts.ptr, np.memmap)  # read from the cache, not copied
    with pytest.raises(ValueError, match="does not fit"):
        LexicalIndex.load(IdTable.of(["a", "b"]), tmp_path)


def test_texts_counted_in_batches_equal_one_batch() -> None:
    rng = random.Random(7)
    ids = [f"p{i}" for i in range(23)]
    texts = _texts(rng, len(ids))
    empty = LexicalIndex.build([], [])
    rows = np.arange(len(ids), dtype=np.int64)
    batched = LexicalIndex.extend(empty, np.zeros(0, dtype=np.int64), ids, rows, [texts[:3], texts[3:4], [], texts[4:]])
    whole = LexicalIndex.build(ids, texts)
    for query in QUERIES:
        assert np.array_equal(batched.scores(query), whole.scores(query))
    with pytest.raises(ValueError, match="22 fresh texts for 23 rows"):
        LexicalIndex.extend(empty, np.zeros(0, dtype=np.int64), ids, rows, [texts[:22]])
