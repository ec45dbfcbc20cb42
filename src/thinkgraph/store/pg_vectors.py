"""Vectors of the PostgreSQL store in a pgvector column, sent and read in binary. The column takes the
dimension of the first vectors stored; each node type gets a partial HNSW index (cosine) the first
time it is searched, built over what is there, as pgvector advises (inserting into an existing HNSW
index is far slower than building it once)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from thinkgraph.errors import EmbeddingMismatchError
from thinkgraph.ids import content_hash
from thinkgraph.models import Node

MAX_EF_SEARCH = 1000  # pgvector's bound on hnsw.ef_search


class PgVectors:
    # provided by PostgresStore
    _conn: psycopg.Connection
    _lock: threading.RLock
    _dim: int | None
    _hnsw: set[str]
    _rows: Callable[..., list[tuple[Any, ...]]]
    _run: Callable[..., int]
    _many: Callable[[str, list[tuple[Any, ...]]], None]
    _node: Callable[[tuple[Any, ...]], Node]
    transaction: Callable[[], AbstractContextManager[None]]
    _claim_transaction: Callable[[], AbstractContextManager[None]]
    _revise: Callable[[], None]

    def _column_dim(self) -> int | None:
        rows = self._rows("SELECT atttypmod FROM pg_attribute WHERE attrelid = 'vectors'::regclass AND attname = 'vec'")
        return None if rows[0][0] < 0 else int(rows[0][0])

    def _fit_column(self, dim: int) -> None:
        """Give the vector column its dimension on first use (inside the caller's write transaction)."""
        if self._dim is None:
            self._dim = self._column_dim()
        if self._dim is None:
            self._run(sql.SQL("ALTER TABLE vectors ALTER COLUMN vec TYPE vector({})").format(sql.Literal(int(dim))))
            self._dim = dim
        elif self._dim != dim:
            raise EmbeddingMismatchError(f"index vectors have dimension {self._dim}; these have dimension {dim}")

    def put_vectors(self, node_ids: Sequence[str], vectors: np.ndarray) -> None:
        vecs = np.ascontiguousarray(vectors, dtype=np.float32)
        if len(node_ids) != len(vecs):
            raise ValueError("node_ids and vectors differ in length")
        if not len(vecs):
            return
        ids = list(node_ids)
        with self.transaction():
            self._fit_column(vecs.shape[1])
            types = dict(self._rows("SELECT id, type FROM nodes WHERE id = ANY(%s)", (ids,)))
            self._many("INSERT INTO vectors(node_id, type, vec) VALUES (%s, %s, %b) ON CONFLICT (node_id)"
                       " DO UPDATE SET type = excluded.type, vec = excluded.vec",
                       [(i, types.get(i, ""), v) for i, v in zip(ids, vecs, strict=True)])
            self._revise()

    def delete_vectors(self, node_ids: Sequence[str]) -> int:
        ids = list(dict.fromkeys(node_ids))
        with self.transaction():
            self._revise()
            return self._run("DELETE FROM vectors WHERE node_id = ANY(%s)", (ids,)) if ids else 0

    def get_vectors(self, node_types: Iterable[str] | None = None, *,
                    node_ids: Sequence[str] | None = None) -> tuple[list[str], np.ndarray]:
        """The vectors of the nodes of ``node_types`` (all when None), of ``node_ids`` only when given."""
        if node_ids is not None:
            rows = self._rows("SELECT v.node_id, v.vec FROM vectors v JOIN nodes n ON n.id = v.node_id"
                              " WHERE v.node_id = ANY(%s) AND (%s::text[] IS NULL OR n.type = ANY(%s::text[]))"
                              " ORDER BY v.seq", (list(node_ids), *[None if node_types is None else
                                                                    [str(t) for t in node_types]] * 2), binary=True)
        elif node_types is None:
            rows = self._rows("SELECT node_id, vec FROM vectors ORDER BY seq", binary=True)
        else:
            rows = self._rows("SELECT v.node_id, v.vec FROM vectors v JOIN nodes n ON n.id = v.node_id"
                              " WHERE n.type = ANY(%s) ORDER BY v.seq", ([str(t) for t in node_types],), binary=True)
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        return [r[0] for r in rows], np.stack([r[1].to_numpy() for r in rows])

    def nodes_missing_vectors(self, node_types: Iterable[str]) -> list[Node]:
        rows = self._rows("SELECT id, type, text, props FROM nodes n WHERE type = ANY(%s)"
                          " AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.node_id = n.id) ORDER BY seq",
                          ([str(t) for t in node_types],))
        return [self._node(r) for r in rows]

    def search_vectors(self, query: np.ndarray, node_type: str, k: int) -> list[tuple[str, float]]:
        """The k nearest nodes of one type by cosine, through that type's HNSW index (approximate)."""
        if k <= 0:
            return []
        node_type = str(node_type)
        self._ensure_hnsw(node_type)
        q = np.asarray(query, dtype=np.float32).ravel()
        # the type is a literal, not a parameter, so that the planner can match the partial index
        stmt = sql.SQL("SELECT node_id, 1 - (vec <=> %b) FROM vectors WHERE type = {} ORDER BY vec <=> %b LIMIT %s")
        with self._claim_transaction():  # a read: no write lock
            self._run("SELECT set_config('hnsw.ef_search', %s, true)", (str(min(max(40, k), MAX_EF_SEARCH)),))
            rows = self._rows(stmt.format(sql.Literal(node_type)), (q, q, k))
        return [(r[0], float(r[1])) for r in rows]

    def _ensure_hnsw(self, node_type: str) -> None:
        if node_type in self._hnsw:
            return
        readable = re.sub(r"[^a-z0-9_]", "_", node_type.lower())[:24]
        name = f"vectors_hnsw_{readable}_{content_hash(node_type, length=8)}"
        if not self._rows("SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = %s",
                          (name,)):
            with self.transaction():
                if self._dim is None:
                    self._dim = self._column_dim()
                if self._dim is None:
                    return  # no vectors yet: nothing to index
                self._run(sql.SQL("CREATE INDEX IF NOT EXISTS {} ON vectors USING hnsw (vec vector_cosine_ops)"
                                  " WHERE type = {}").format(sql.Identifier(name), sql.Literal(node_type)))
        self._hnsw.add(node_type)
