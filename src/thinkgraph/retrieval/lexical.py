"""BM25 over node texts (passages, facts, entity names) with `bm25s` (sparse-matrix BM25) and the
Snowball English stemmer: the lexical half of hybrid retrieval. Dense MiniLM vectors miss rare
names and numbers that a term match finds; BM25 misses paraphrases that the vectors find."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

from thinkgraph.npyfiles import numpy_headers

# Lucene's BM25 defaults (bm25s' own), used as published.
BM25_K1 = 1.5
BM25_B = 0.75


class LexicalIndex:
    """BM25 scores of a query against every text, in the order the texts were given."""

    def __init__(self, ids: Sequence[str], texts: Sequence[str] | None = None, *,
                 saved: Path | None = None) -> None:
        """Index ``texts``, or load the index that ``save`` wrote to ``saved`` for the same ids."""
        # bm25s sets its own logger to DEBUG when imported, which would print through the CLI's
        # handler on every index build; its warnings still show.
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        self.ids = ids  # (a million ids read from the view cache stay arrays: only their count is used)
        self._stemmer = Stemmer.Stemmer("english")
        self._bm25: bm25s.BM25 | None = None
        if saved is not None:
            if (saved / "params.index.json").is_file():  # (an index of texts without a term has none)
                with numpy_headers():  # (bm25s reads .npy files: npyfiles.py)
                    self._bm25 = bm25s.BM25.load(saved, mmap=True, show_progress=False)
            return
        tokens = self._tokenize(list(texts or []))
        if any(tokens):
            self._bm25 = bm25s.BM25(k1=BM25_K1, b=BM25_B)
            self._bm25.index(tokens, show_progress=False)

    def save(self, folder: Path) -> None:
        """Numpy arrays and JSON (bm25s' own format, without pickle)."""
        if self._bm25 is not None:
            self._bm25.save(folder, show_progress=False)

    def __len__(self) -> int:
        return len(self.ids)

    def _tokenize(self, texts: list[str]) -> list[list[str]]:
        tokens: list[list[str]] = bm25s.tokenize(texts, stopwords="en", stemmer=self._stemmer, return_ids=False,
                                                 show_progress=False)
        return tokens

    def scores(self, query: str) -> np.ndarray:
        """BM25 score per text (zeros when no query term occurs in the collection)."""
        if self._bm25 is None or not self.ids:
            return np.zeros(len(self.ids), dtype=np.float64)
        terms = self._tokenize([query])[0]
        vocab = self._bm25.vocab_dict
        known = [t for t in terms if t in vocab]
        if not known:
            return np.zeros(len(self.ids), dtype=np.float64)
        if self._bm25.nonoccurrence_array is not None:  # (not Lucene's BM25, which is used here)
            return np.asarray(self._bm25.get_scores(known), dtype=np.float64)
        return self._summed([vocab[t] for t in known])

    def _summed(self, token_ids: list[int]) -> np.ndarray:
        """The sum of the query tokens' precomputed BM25 columns (bm25s' eager index), one token at a
        time: a token's postings name each document once, so plain fancy-index addition is exact, where
        bm25s' ``np.add.at`` took 20 ms a question at a million passages."""
        assert self._bm25 is not None
        index = self._bm25.scores
        data, indptr, indices = index["data"], index["indptr"], index["indices"]
        out = np.zeros(len(self.ids), dtype=np.float64)
        for token in token_ids:  # a token repeated in the query counts each time, as in bm25s
            start, end = int(indptr[token]), int(indptr[token + 1])
            out[indices[start:end]] += data[start:end]
        return out
