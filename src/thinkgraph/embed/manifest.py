"""The index's embedding manifest and what the encoder sees of a node: every vector of an index comes
from one encoder, recorded on the first batch, and an index opened with another model is refused.
Shared by the embedding stage (index/) and the views retrieval reads (retrieval/)."""

from __future__ import annotations

from typing import Protocol

from thinkgraph.embed.base import Embedder
from thinkgraph.errors import EmbeddingMismatchError
from thinkgraph.models import Node, NodeType


class MetaRecords(Protocol):
    """The part of a store the manifest lives in (store.base.Manifest has it)."""

    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...


def node_embedding_text(node: Node) -> str:
    """What the encoder sees: chunks carry their document title, as dense passage retrieval does."""
    if node.type == NodeType.CHUNK and node.props.get("title"):
        return f"{node.props['title']}\n{node.text}"
    return node.text


def check_embedding_manifest(store: MetaRecords, embedder: Embedder) -> None:
    recorded = store.get_meta("embed_model")
    if recorded is None:
        return
    if recorded != embedder.name:
        raise EmbeddingMismatchError(
            f"this index was built with embedding model {recorded!r} (dimension "
            f"{store.get_meta('embed_dim')}); the configured model is {embedder.name!r}. "
            "Configure the same model or build a new index")


def record_embedding_manifest(store: MetaRecords, embedder: Embedder, dim: int) -> None:
    recorded_dim = store.get_meta("embed_dim")
    if recorded_dim is not None and int(recorded_dim) != dim:
        raise EmbeddingMismatchError(f"index vectors have dimension {recorded_dim}; the model gives {dim}")
    if store.get_meta("embed_model") is None:
        store.set_meta("embed_model", embedder.name)
        store.set_meta("embed_dim", str(dim))
