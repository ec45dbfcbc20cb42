"""The embedder contract and the factory that picks a backend from settings."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from thinkgraph.config import EmbeddingSettings
from thinkgraph.errors import ConfigError


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
    return matrix / np.maximum(norms, 1e-12)


def make_embedder(settings: EmbeddingSettings) -> Embedder:
    if settings.provider == "local":
        from thinkgraph.embed.local import LocalEmbedder

        return LocalEmbedder(settings.model, batch_size=settings.batch_size)
    if settings.provider == "openai":
        from thinkgraph.embed.remote import RemoteEmbedder

        if not settings.base_url:
            raise ConfigError("embedding provider 'openai' needs [embedding] base_url")
        key = settings.api_key.get_secret_value() if settings.api_key else None
        return RemoteEmbedder(settings.base_url, settings.model, api_key=key, batch_size=settings.batch_size)
    if settings.provider == "hashing":
        from thinkgraph.embed.hashing import HashingEmbedder

        return HashingEmbedder(settings.dim or 384)
    raise ConfigError(f"unknown embedding provider {settings.provider!r} (valid: local, openai, hashing)")
