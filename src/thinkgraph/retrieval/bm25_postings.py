"""BM25 as arrays built from term counts, so that a new revision of the index reuses the last one's.

bm25s builds its index from every text's tokens in one pass and keeps only the scores; after adding 100
documents to 100k passages the view tokenised and scored every passage again (4.4 s of its 11.7 s).
Here each text's distinct terms and their counts are kept beside the scores (``TermCounts``), so a
revision takes the counts of the texts it shares with the last one (``assemble``) and tokenises only
the new ones. BM25's statistics are global (document frequencies, the mean length), so the scores are
computed again from all the counts (``score``), a few vectorised passes: the result equals a build
from scratch, which is the same code run on counts from no earlier revision."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from thinkgraph.retrieval.id_table import IdTable, encode_ids

# Lucene's BM25 defaults (bm25s' own), used as published.
BM25_K1 = 1.5
BM25_B = 0.75

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class TermCounts:
    """Text ``d``'s distinct terms are ``term[ptr[d]:ptr[d + 1]]`` (positions in ``terms``), each
    occurring ``count`` times in it."""

    terms: IdTable
    ptr: np.ndarray
    term: np.ndarray
    count: np.ndarray

    @property
    def texts(self) -> int:
        return int(self.ptr.shape[0]) - 1

    def lengths(self) -> Ints:
        return np.diff(np.asarray(self.ptr)).astype(np.int64)


@dataclass(frozen=True)
class Scores:
    """BM25 score of each (term, text) pair, by term: term ``t``'s texts are
    ``indices[indptr[t]:indptr[t + 1]]`` with scores ``data`` at the same places."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray


def empty_counts(texts: int = 0) -> TermCounts:
    return TermCounts(IdTable(encode_ids([])), np.zeros(texts + 1, dtype=np.int64),
                      np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32))


class TermCounter:
    """Counts tokenised texts batch by batch (a batch's token strings are the memory that grows: 60
    million of them for a million passages at once) over ``known``'s terms and then the terms it lacks,
    numbered from ``len(known)`` in the order first met (``new_terms``)."""

    def __init__(self, known: IdTable) -> None:
        self.known = known
        self._new: dict[str, int] = {}
        self._parts: list[tuple[Ints, np.ndarray, np.ndarray]] = []  # per batch: distinct terms per text, terms, counts

    @property
    def new_terms(self) -> list[str]:
        return list(self._new)

    def add(self, tokens: list[list[str]]) -> None:
        local: dict[str, int] = {}
        lengths = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=len(tokens))
        codes = np.fromiter((local.setdefault(word, len(local)) for text in tokens for word in text),
                            dtype=np.int64, count=int(lengths.sum()))
        words = list(local)
        found = self.known.rows_of(words)
        for at in np.flatnonzero(found < 0):
            found[at] = len(self.known) + self._new.setdefault(words[at], len(self._new))
        vocabulary = max(len(self.known) + len(self._new), 1)
        text_of = np.repeat(np.arange(len(tokens), dtype=np.int64), lengths)
        keys, count = np.unique(text_of * vocabulary + found[codes], return_counts=True)
        text, term = np.divmod(keys, vocabulary)
        self._parts.append((np.bincount(text, minlength=len(tokens)), term.astype(np.int32), count.astype(np.int32)))

    def counts(self) -> TermCounts:
        """Every batch's texts in the order added (their term ids as above, over ``known``)."""
        if not self._parts:
            return empty_counts()
        lengths = np.concatenate([part[0] for part in self._parts])
        ptr = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=ptr[1:])
        return TermCounts(self.known, ptr, np.concatenate([part[1] for part in self._parts]),
                          np.concatenate([part[2] for part in self._parts]))


def assemble(earlier: TermCounts, moved: Ints, fresh: TermCounts, fresh_rows: Ints, new_terms: list[str],
             texts: int) -> TermCounts:
    """The counts of a revision with ``texts`` texts: earlier text ``e`` is now text ``moved[e]`` (-1:
    gone), and ``fresh``'s texts (counted over ``earlier.terms`` plus ``new_terms``) are texts
    ``fresh_rows``. Terms that no text holds any more are dropped."""
    lengths = np.zeros(texts, dtype=np.int64)
    kept = np.flatnonzero(moved >= 0)
    lengths[moved[kept]] = earlier.lengths()[kept]
    lengths[fresh_rows] = fresh.lengths()
    ptr = np.zeros(texts + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    term = np.zeros(int(ptr[-1]), dtype=np.int32)
    count = np.zeros(int(ptr[-1]), dtype=np.int32)
    for source, target in ((earlier, moved), (fresh, fresh_rows)):
        source_ptr = np.asarray(source.ptr)
        rows = np.repeat(np.arange(source.texts, dtype=np.int64), source.lengths())
        keep = target[rows] >= 0
        at = ptr[target[rows[keep]]] + (np.flatnonzero(keep) - source_ptr[rows[keep]])
        term[at] = np.asarray(source.term)[keep]
        count[at] = np.asarray(source.count)[keep]
    terms = np.concatenate([np.asarray(earlier.terms.ids), encode_ids(new_terms)]) \
        if new_terms else np.asarray(earlier.terms.ids)
    used = np.bincount(term, minlength=terms.shape[0]) > 0
    renumber = np.cumsum(used) - 1
    if used.all():
        table = earlier.terms if not new_terms else IdTable(terms)
        return TermCounts(table, ptr, term, count)
    return TermCounts(IdTable(terms[used]), ptr, renumber[term].astype(np.int32), count)


def score(counts: TermCounts, *, k1: float = BM25_K1, b: float = BM25_B) -> Scores:
    """Lucene's BM25 (bm25s' default): idf = ln(1 + (N - df + 0.5) / (df + 0.5)) and the term part
    tf / (tf + k1 (1 - b + b dl / avgdl)), dl counting a text's tokens with repeats."""
    vocabulary = len(counts.terms)
    term = np.asarray(counts.term, dtype=np.int64)
    if not term.shape[0]:
        return Scores(np.zeros(vocabulary + 1, dtype=np.int64), np.zeros(0, dtype=np.int32),
                      np.zeros(0, dtype=np.float32))
    tf = np.asarray(counts.count, dtype=np.float64)
    text = np.repeat(np.arange(counts.texts, dtype=np.int64), counts.lengths())
    length = np.bincount(text, weights=tf, minlength=counts.texts)
    df = np.bincount(term, minlength=vocabulary)
    idf = np.log(1 + (counts.texts - df + 0.5) / (df + 0.5))
    part = tf / (tf + k1 * (1 - b + b * length[text] / length.mean()))
    order = np.argsort(term, kind="stable")
    indptr = np.zeros(vocabulary + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    return Scores(indptr, text[order].astype(np.int32), (idf[term] * part)[order].astype(np.float32))
