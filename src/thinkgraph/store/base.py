"""The store contract every backend implements (tests/test_store_contract.py checks it on each).

The contract is split by role, one protocol per concern, so that code needing one concern can say
so; :class:`GraphStore` is their union, what a backend implements and what most code is typed
against."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from thinkgraph.models import DocStatus, DocumentRecord, Edge, Node, Proposal, Provenance


@dataclass(frozen=True, slots=True)
class RemovalReport:
    doc_id: str
    nodes_removed: int
    edges_removed: int


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """What the changes after a position of the change log touched: node ids, edges by their two ends
    (as written: src, dst) and the node ids whose vector was written or deleted. Touched, not changed:
    a row written again with the same values is named too."""

    nodes: frozenset[str]
    edges: frozenset[tuple[str, str]]
    vectors: frozenset[str]


@dataclass(frozen=True, slots=True)
class Section:
    """One part of an index as plain rows, the same columns in every backend, for `thinkgraph copy`.
    ``key`` names the columns that identify a row (a loaded row replaces one with the same key)."""

    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]


# In dependency order (nodes before the vectors and edges that name them). Vectors are rows of
# (node_id, float32 array); JSON columns (props, value, payload) travel as their stored text, spans
# as stored (-1 for "no offset", "" for "no chunk"), so a copy is exact. Claims are not copied: they
# belong to the processes working on one store.
SECTIONS: tuple[Section, ...] = (
    Section("meta", ("key", "value"), ("key",)),
    Section("documents", ("id", "source", "title", "content_hash", "status", "error", "n_chars", "updated"),
            ("id",)),
    Section("nodes", ("id", "type", "text", "props"), ("id",)),
    Section("edges", ("id", "src", "dst", "type", "weight", "props"), ("id",)),
    Section("provenance", ("item_id", "doc_id", "chunk_id", "start", "end"),
            ("item_id", "doc_id", "chunk_id", "start", "end")),
    Section("vectors", ("node_id", "vec"), ("node_id",)),
    Section("stages", ("stage", "key"), ("stage", "key")),
    Section("failures", ("stage", "key", "message", "count"), ("stage", "key")),
    Section("llm_cache", ("key", "value", "created"), ("key",)),
    Section("proposals", ("id", "question", "subject", "predicate", "object", "chunk_id", "doc_id", "status",
                          "created"), ("id",)),
    Section("audit", ("id", "at", "action", "payload"), ("id",)),
    Section("usage", ("step", "calls", "prompt_tokens", "completion_tokens", "seconds"), ("step",)),
)
SECTION_BY_NAME = {s.name: s for s in SECTIONS}


@runtime_checkable
class IndexLocation(Protocol):
    """Where the index is, and the connection to it.

    ``location`` reopens the same index with ``open_store``; for a database it may hold a password
    typed into the URL, so it is never printed: messages use ``describe()``. ``path`` is the local
    anchor for files derived from the index (the typed graph lives in ``{path}.kg``): the file
    itself for SQLite, a folder in the local cache for a database. ``read_only``: every read works
    and every write fails with a one-line error (an index file this user may not write); code that
    would only keep something (a cache, usage, a derived result) checks it and skips the write."""

    location: str
    path: Path
    read_only: bool

    def describe(self) -> str: ...
    def size_bytes(self) -> int: ...
    def close(self) -> None: ...


@runtime_checkable
class Manifest(Protocol):
    """The index's key/value metadata (schema version, change counters, the content revision) and
    its transactions: nested use joins the outer one; the outermost commits or rolls back."""

    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def increment_meta(self, key: str) -> int: ...
    def content_revision(self) -> str | None: ...
    # Indexes an index made by an earlier version lacks, created by a writer (an indexing run), never
    # by a reader; returns their names.
    def upgrade_indexes(self) -> list[str]: ...
    def transaction(self) -> AbstractContextManager[None]: ...
    # For the duration, this connection may keep up to ``kib`` of the index's pages in memory (never
    # less than it already may): for a stage that writes rows at random places of large indexes. A
    # database server keeps its own page cache, so there it changes nothing.
    def page_cache(self, kib: int) -> AbstractContextManager[None]: ...


@runtime_checkable
class DocumentStore(Protocol):
    """The source documents of the index and their indexing status."""

    def upsert_document(self, doc: DocumentRecord) -> None: ...
    def get_document(self, doc_id: str) -> DocumentRecord | None: ...
    def find_document_by_hash(self, content_hash: str) -> DocumentRecord | None: ...
    def list_documents(self, status: DocStatus | None = None) -> list[DocumentRecord]: ...
    def set_document_status(self, doc_id: str, status: DocStatus, error: str | None = None) -> None: ...
    def remove_document(self, doc_id: str) -> RemovalReport: ...


@runtime_checkable
class GraphData(Protocol):
    """The graph: nodes, edges and the provenance (document spans) of each."""

    def add_nodes(self, nodes: Iterable[Node]) -> None: ...
    def add_edges(self, edges: Iterable[Edge]) -> None: ...
    def add_provenance(self, records: Iterable[Provenance]) -> None: ...
    def get_node(self, node_id: str) -> Node | None: ...
    def get_nodes(self, node_ids: Sequence[str]) -> list[Node]: ...
    def iter_nodes(self, node_type: str | None = None) -> Iterator[Node]: ...
    def iter_edges(self, edge_types: Iterable[str] | None = None) -> Iterator[Edge]: ...
    # src, dst and weight of every edge of these types, in insertion order, as three columns: a whole
    # graph read without an Edge (and its properties) per row
    def edge_columns(self, edge_types: Iterable[str]) -> tuple[list[str], list[str], list[float]]: ...
    def edges_of(self, node_id: str, edge_type: str | None = None) -> list[Edge]: ...
    def edges_among(self, node_ids: Sequence[str]) -> list[Edge]: ...  # both ends in the set, insertion order
    # The edges between each pair, either way, in insertion order; each pair is looked up through the
    # index of its first node (give the one with fewer edges first: a hub's edges are never scanned).
    def edges_between(self, pairs: Sequence[tuple[str, str]]) -> list[Edge]: ...
    # The edges with one end in ``node_ids`` and the other in ``among``, in insertion order, each read
    # through the ``node_ids`` end's index (give the less connected side there: propositions, facts).
    def edges_from(self, node_ids: Sequence[str], among: Sequence[str]) -> list[Edge]: ...
    def provenance(self, item_id: str) -> list[Provenance]: ...
    def update_node(self, node: Node) -> None: ...
    def delete_node(self, node_id: str) -> None: ...
    def delete_edges(self, edges: Iterable[Edge]) -> int: ...  # these edges (by their key); returns how many went
    def delete_edges_of_type(self, edge_type: str) -> int: ...
    def delete_nodes_of_type(self, node_type: str) -> int: ...
    def count_nodes(self) -> dict[str, int]: ...
    def count_edges(self) -> dict[str, int]: ...


@runtime_checkable
class VectorStore(Protocol):
    """One embedding per node, and nearest-neighbour search among the nodes of one type."""

    def put_vectors(self, node_ids: Sequence[str], vectors: np.ndarray) -> None: ...
    def get_vectors(self, node_types: Iterable[str] | None = None, *,
                    node_ids: Sequence[str] | None = None) -> tuple[list[str], np.ndarray]: ...
    def nodes_missing_vectors(self, node_types: Iterable[str]) -> list[Node]: ...
    def delete_vectors(self, node_ids: Sequence[str]) -> int: ...  # (a node whose text changed is encoded again)
    def search_vectors(self, query: np.ndarray, node_type: str, k: int) -> list[tuple[str, float]]: ...


@runtime_checkable
class Bookkeeping(Protocol):
    """Stages, failures, the LLM cache and usage, proposals, audit."""

    def mark_done(self, stage: str, key: str) -> None: ...
    def is_done(self, stage: str, key: str) -> bool: ...
    def record_failure(self, stage: str, key: str, message: str) -> None: ...
    def clear_failure(self, stage: str, key: str) -> None: ...
    def failure_counts(self) -> dict[str, int]: ...
    def failures(self, stage: str | None = None) -> list[tuple[str, str, str, int]]: ...
    def cache_get(self, key: str) -> Any | None: ...
    def cache_put(self, key: str, value: Any) -> None: ...
    def add_proposal(self, proposal: Proposal) -> int: ...
    def list_proposals(self, status: str | None = None) -> list[Proposal]: ...
    def set_proposal_status(self, proposal_id: int, status: str) -> None: ...
    def record_usage(self, step: str, calls: int, prompt_tokens: int, completion_tokens: int,
                     seconds: float) -> None: ...
    def usage_totals(self) -> dict[str, dict[str, float]]: ...
    def add_audit(self, action: str, payload: dict[str, Any]) -> None: ...
    def list_audit(self, limit: int = 100) -> list[dict[str, Any]]: ...


@runtime_checkable
class ClaimStore(Protocol):
    """Work claims shared by processes (indexing scale-out; used by ``store.claims.WorkClaims``).

    A claim is a lease on one work item (kind, key) held by one owner until it expires; the
    store's clock decides expiry, so processes on several hosts agree."""

    def claim(self, kind: str, key: str, owner: str, lease_s: float, *, replace: str | None = None) -> bool: ...
    def renew_claims(self, owner: str, lease_s: float) -> int: ...
    def release_claim(self, kind: str, key: str, owner: str) -> None: ...
    def live_claims(self, kind: str, key: str | None = None) -> dict[str, str]: ...


CHANGE_LOG_KEEP = 5_000_000  # rows of the change log kept (ours: ~50 changes of 100 documents at 100k passages)


@runtime_checkable
class ChangeLog(Protocol):
    """Which nodes, edges and vectors each change touched, kept from ``log_changes`` on, so that what is
    derived from the index (the retrieval view) follows a change by reading only what it touched.

    A position is a point in the log: ``change_position`` is the current one (None while there is no
    log: it was never started, or the index is a copy or opened read-only before it had one), and
    ``changes_since`` what was touched after a position, or None when the log does not reach back to
    it. ``revision``: also None unless the position belongs to that content revision of this index (each
    revision set is logged), so that a log begun anew (an index rebuilt at the same place) or gone another
    way (a backup put back) is never read as the one a derived file was made from. Writes are serialised,
    so positions follow the order of the commits. ``log_changes`` also keeps the log to its last ``keep``
    rows (a consumer from before them builds whole)."""

    def log_changes(self, keep: int = CHANGE_LOG_KEEP) -> None: ...
    def change_position(self) -> int | None: ...
    def changes_since(self, position: int, revision: str | None = None) -> ChangeSet | None: ...


@runtime_checkable
class RowDump(Protocol):
    """The whole index as rows, one :data:`SECTIONS` entry at a time (copy between backends)."""

    def dump(self, name: str) -> Iterator[tuple[Any, ...]]: ...
    def load(self, name: str, rows: Iterable[tuple[Any, ...]]) -> int: ...


@runtime_checkable
class GraphStore(IndexLocation, Manifest, DocumentStore, GraphData, VectorStore, Bookkeeping, ClaimStore, ChangeLog,
                 RowDump, Protocol):
    """Everything a backend implements: the union of the roles above."""
