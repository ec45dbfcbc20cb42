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
def _word_hash(word: str) -> int:
    """md5 of a word, cached: words repeat, and a pure function's cache is not shared state."""
    return int.from_bytes(hashlib.md5(word.encode()).digest(), "big")


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
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                h = _word_hash(word)
                out[i, h % self._dim] += 1.0 if (h >> 64) % 2 else -1.0
        norms = np.linalg.norm(out, axis=1)
        out[norms == 0, 0] = 1.0  # an empty text still gets a unit vector
        norms[norms == 0] = 1.0
        return out / norms[:, None]
