"""Text embeddings (local sentence-transformers or an OpenAI-compatible endpoint) and vector search."""

from thinkgraph.embed.base import Embedder
from thinkgraph.embed.factory import make_embedder
from thinkgraph.embed.vector_index import VectorIndex

__all__ = ["Embedder", "VectorIndex", "make_embedder"]
