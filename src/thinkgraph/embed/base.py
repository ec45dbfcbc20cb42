"""The embedder contract every backend implements, and the row normalisation they share."""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-normalised float32 rows, one per text."""
        ...

    def prepare_queries(self) -> None:
        """Get ready to embed a question soon (e.g. load a model in the background); may do nothing."""
        ...


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: np.ndarray = matrix / np.maximum(norms, 1e-12)
    return unit
