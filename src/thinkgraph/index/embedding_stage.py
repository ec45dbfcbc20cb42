"""Embedding stage: every node of the configured types gets a vector from the one encoder, and the
index manifest records that encoder so a mismatched model is refused."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from thinkgraph.embed.base import Embedder
from thinkgraph.errors import EmbeddingMismatchError
from thinkgraph.models import Node, NodeType
from thinkgraph.store.base import GraphStore

EMBED_BATCH = 256


def node_embedding_text(node: Node) -> str:
    """What the encoder sees: chunks carry their document title, as dense passage retrieval does."""
    if node.type == NodeType.CHUNK and node.props.get("title"):
        return f"{node.props['title']}\n{node.text}"
    return node.text


def check_embedding_manifest(store: GraphStore, embedder: Embedder) -> None:
    recorded = store.get_meta("embed_model")
    if recorded is None:
        return
    if recorded != embedder.name:
        raise EmbeddingMismatchError(
            f"this index was built with embedding model {recorded!r} (dimension "
            f"{store.get_meta('embed_dim')}); the configured model is {embedder.name!r}. "
            "Configure the same model or build a new index")


def record_embedding_manifest(store: GraphStore, embedder: Embedder, dim: int) -> None:
    recorded_dim = store.get_meta("embed_dim")
    if recorded_dim is not None and int(recorded_dim) != dim:
        raise EmbeddingMismatchError(f"index vectors have dimension {recorded_dim}; the model gives {dim}")
    if store.get_meta("embed_model") is None:
        store.set_meta("embed_model", embedder.name)
        store.set_meta("embed_dim", str(dim))


def embed_missing(store: GraphStore, embedder: Embedder, node_types: Iterable[str],
                  progress: Callable[[int, int], None] | None = None) -> int:
    """Embed nodes that have no vector yet; committed batch by batch. Returns how many were embedded."""
    check_embedding_manifest(store, embedder)
    todo = store.nodes_missing_vectors(list(node_types))
    for start in range(0, len(todo), EMBED_BATCH):
        batch = todo[start:start + EMBED_BATCH]
        vectors = embedder.embed([node_embedding_text(n) for n in batch])
        with store.transaction():
            record_embedding_manifest(store, embedder, vectors.shape[1])
            store.put_vectors([n.id for n in batch], vectors)
        if progress:
            progress(min(start + EMBED_BATCH, len(todo)), len(todo))
    return len(todo)
