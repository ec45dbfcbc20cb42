"""The embedder a configuration names: one factory, beside the contract (embed/base.py) that each
backend implements; backends are imported only when chosen."""

from __future__ import annotations

from thinkgraph.config import EmbeddingSettings
from thinkgraph.embed.base import Embedder
from thinkgraph.errors import ConfigError


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
