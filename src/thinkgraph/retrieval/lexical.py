"""BM25 over node texts (passages, facts, entity names), tokenised by `bm25s` with the Snowball English
stemmer and its English stopwords: the lexical half of hybrid retrieval. Dense MiniLM vectors miss rare
names and numbers that a term match finds; BM25 misses paraphrases that the vectors find.

The index is kept as arrays (``bm25_postings.py``): each text's term counts and the scores by term,
memory-mapped from the view cache, and a new revision of the index extends the last one's counts by
the texts it adds (``LexicalIndex.extend``) instead of tokenising every text again."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

from thinkgraph.retrieval.bm25_postings import (
    BM25_B,
    BM25_K1,
    Ints,
    Scores,
    TermCounter,
    TermCounts,
    assemble,
    empty_counts,
    score,
)
from thinkgraph.retrieval.id_table import IdTable
from thinkgraph.retrieval.view_cache import read_array, read_json, write_arrays, write_json

__all__ = ["BM25_B", "BM25_K1", "LexicalIndex", "tokenize"]

_COUNTS = ("ptr", "term", "count")
_SCORES = ("indptr", "indices", "data")


def tokenize(texts: list[str]) -> list[list[str]]:
    """Lower-cased words of two or more characters, English stopwords dropped, Snowball stems."""
    # bm25s sets its own logger to DEBUG when imported, which would print through the CLI's handler.
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    tokens: list[list[str]] = bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("english"),
                                             return_ids=False, show_progress=False)
    return tokens


class LexicalIndex:
    """BM25 scores of a query against every text, in the order the texts were given."""

    def __init__(self, ids: Sequence[str], counts: TermCounts, scores: Scores) -> None:
        if counts.texts != len(ids) or scores.indptr.shape[0] != len(counts.terms) + 1:
            raise ValueError(f"a BM25 index of {counts.texts} texts and {len(counts.terms)} terms "
                             f"does not fit {len(ids)} ids and {scores.indptr.shape[0] - 1} posting lists")
        self.ids = ids  # (a million ids read from the view cache stay arrays: only their count is used)
        self.counts, self._scores = counts, scores

    @classmethod
    def build(cls, ids: Sequence[str], texts: Sequence[str]) -> LexicalIndex:
        return cls.extend(cls(ids[:0], empty_counts(), score(empty_counts())), np.zeros(0, dtype=np.int64), ids,
                          np.arange(len(texts), dtype=np.int64), [list(texts)])

    @classmethod
    def extend(cls, earlier: LexicalIndex, moved: Ints, ids: Sequence[str], fresh_rows: Ints,
               fresh_texts: Iterable[Sequence[str]]) -> LexicalIndex:
        """The index of ``ids`` where earlier text ``e`` is now text ``moved[e]`` (-1: gone) with the
        same text, and the texts of ``fresh_rows``, given in batches in that order, are tokenised. Every
        row not reached by ``moved`` must be among ``fresh_rows``."""
        counter = TermCounter(earlier.counts.terms)
        for batch in fresh_texts:
            counter.add(tokenize(list(batch)))
        fresh = counter.counts()
        if fresh.texts != len(fresh_rows):
            raise ValueError(f"{fresh.texts} fresh texts for {len(fresh_rows)} rows")
        counts = assemble(earlier.counts, moved, fresh, fresh_rows, counter.new_terms, len(ids))
        return cls(ids, counts, score(counts))

    @classmethod
    def load(cls, ids: Sequence[str], folder: Path, *, verify: bool = False) -> LexicalIndex:
        """The index ``save`` wrote for the same ids. ``verify``: also check every count against what was
        saved (a pass over them: done before a revision is extended from it, so that a damaged but
        readable file is built anew and not carried into every later revision)."""
        counts = TermCounts(IdTable.load(folder), *(read_array(folder, name) for name in _COUNTS))
        scores = Scores(*(read_array(folder, name) for name in _SCORES))
        manifest = read_json(folder, "manifest")
        entries = int(counts.ptr[-1]) if counts.ptr.shape[0] else -1
        if not (counts.ptr.shape[0] and int(counts.ptr[0]) == 0 and entries == counts.term.shape[0]
                == counts.count.shape[0] == scores.indices.shape[0] == scores.data.shape[0]
                == int(scores.indptr[-1]) == manifest["entries"]):
            raise ValueError(f"BM25 arrays in {folder} do not agree")
        term = np.asarray(counts.term)
        if verify and (np.any(np.diff(np.asarray(counts.ptr)) < 0)
                       or (entries and not 0 <= int(term.min()) <= int(term.max()) < len(counts.terms))
                       or int(np.sum(counts.count, dtype=np.int64)) != manifest["tokens"]):
            raise ValueError(f"BM25 counts in {folder} are damaged")
        return cls(ids, counts, scores)

    def save(self, folder: Path) -> None:
        """Numpy arrays only (no pickle): the terms, the counts by text and the scores by term."""
        self.counts.terms.save(folder)
        write_arrays(folder, **{name: getattr(self.counts, name) for name in _COUNTS},
                     **{name: getattr(self._scores, name) for name in _SCORES})
        write_json(folder, "manifest", {"entries": int(self.counts.term.shape[0]),
                                        "tokens": int(np.sum(self.counts.count, dtype=np.int64))})

    def __len__(self) -> int:
        return len(self.ids)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score per text (zeros when no query term occurs in the collection); a term repeated in
        the query counts each time, as in bm25s."""
        out = np.zeros(len(self.ids), dtype=np.float64)
        terms = tokenize([query])[0]
        if not terms or not len(self.counts.terms):
            return out
        indptr, indices, data = self._scores.indptr, self._scores.indices, self._scores.data
        for term in self.counts.terms.rows_of(terms):
            if term >= 0:  # a term's postings name each text once, so plain fancy-index addition is exact
                start, end = int(indptr[term]), int(indptr[term + 1])
                out[indices[start:end]] += data[start:end]
        return out
