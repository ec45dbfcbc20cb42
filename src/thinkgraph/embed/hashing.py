"""A model-free embedder: signed feature hashing of lowercase words. Texts that share words have a
positive cosine, nothing more (no synonyms, no semantics). It exists for graphs too large to embed
with a neural model on the machine at hand (GRBench's 5-million-node graphs would take hours with
MiniLM on two cores) and for reproducible tests; choose it with ``[embedding] provider = "hashing"``."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

import numpy as np

_WORD = re.compile(r"\w+")


@lru_cache(maxsize=1 << 20)
def _signed_slot(word: str, dim: int) -> int:
    """The word's dimension plus one, negated for a negative sign (so one integer carries both); from
    the md5 of the word, cached: words repeat, and a pure function's cache is not shared state."""
    h = int.from_bytes(hashlib.md5(word.encode()).digest(), "big")
    slot = h % dim + 1
    return slot if (h >> 64) % 2 else -slot


class HashingEmbedder:
    def __init__(self, dim: int = 384, name: str | None = None) -> None:
        self._dim = dim
        self._name = name or f"hashing:{dim}"

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def prepare_queries(self) -> None:
        """Nothing to load ahead."""

    def embed(self, texts: list[str]) -> np.ndarray:
        """Counts of each word's signed slot, summed per text in one bincount: 2.9x faster than a
        per-word loop of scalar numpy updates on 200k GRBench titles (0.46 s against 1.34 s)."""
        n, dim = len(texts), self._dim
        words = [_WORD.findall(text.lower()) for text in texts]
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=n)
        slots = np.fromiter((_signed_slot(w, dim) for ws in words for w in ws), dtype=np.int64,
                            count=int(lengths.sum()))
        flat = np.repeat(np.arange(n, dtype=np.int64) * dim, lengths) + np.abs(slots) - 1
        out = np.bincount(flat, weights=np.sign(slots).astype(np.float64), minlength=n * dim)
        out = out.reshape(n, dim).astype(np.float32)
        norms = np.linalg.norm(out, axis=1)
        out[norms == 0, 0] = 1.0  # an empty text still gets a unit vector
        norms[norms == 0] = 1.0
        unit: np.ndarray = out / norms[:, None]
        return unit
