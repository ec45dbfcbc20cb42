"""A model-free embedder: signed feature hashing of lowercase words. Texts that share words have a
positive cosine, nothing more (no synonyms, no semantics). It exists for graphs too large to embed
with a neural model on the machine at hand (GRBench's 5-million-node graphs would take hours with
MiniLM on two cores) and for reproducible tests; choose it with ``[embedding] provider = "hashing"``."""

from __future__ import annotations

import hashlib
import re

import numpy as np

_WORD = re.compile(r"\w+")


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

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                h = int.from_bytes(hashlib.md5(word.encode()).digest(), "big")
                out[i, h % self._dim] += 1.0 if (h >> 64) % 2 else -1.0
            norm = np.linalg.norm(out[i])
            if norm:
                out[i] /= norm
            else:
                out[i, 0] = 1.0  # an empty text still gets a unit vector
        return out
