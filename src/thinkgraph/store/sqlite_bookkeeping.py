"""The bookkeeping half of the SQLite store: stage markers, failures, the LLM cache, HITL proposals,
usage, the audit log, work claims and the copy sections. Mixed into :class:`SQLiteStore`, whose
connection and transactions it uses."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from itertools import islice
from typing import Any

import numpy as np

from thinkgraph.models import Proposal
from thinkgraph.store.common import GRAPH_SECTIONS, proposal_from_row, section, select_sql, upsert_sql

LOAD_BATCH = 2000


class SQLiteBookkeeping:
    # both provided by SQLiteStore
    _db: sqlite3.Connection
    transaction: Callable[[], AbstractContextManager[None]]
    _revise: Callable[[], None]

    def mark_done(self, stage: str, key: str) -> None:
        with self.transaction():
            self._db.execute("INSERT OR IGNORE INTO stages(stage, key) VALUES (?, ?)", (stage, key))

    def is_done(self, stage: str, key: str) -> bool:
        return self._db.execute("SELECT 1 FROM stages WHERE stage=? AND key=?", (stage, key)).fetchone() is not None

    def record_failure(self, stage: str, key: str, message: str) -> None:
        with self.transaction():
            self._db.execute(
                "INSERT INTO failures(stage, key, message, count) VALUES (?, ?, ?, 1)"
                " ON CONFLICT(stage, key) DO UPDATE SET message=excluded.message, count=count+1",
                (stage, key, message[:500]))

    def clear_failure(self, stage: str, key: str) -> None:
        with self.transaction():
            self._db.execute("DELETE FROM failures WHERE stage=? AND key=?", (stage, key))

    def failure_counts(self) -> dict[str, int]:
        return dict(self._db.execute("SELECT stage, COUNT(*) FROM failures GROUP BY stage ORDER BY stage"))

    def failures(self, stage: str | None = None) -> list[tuple[str, str, str, int]]:
        sql = "SELECT stage, key, message, count FROM failures"
        rows = self._db.execute(sql + " WHERE stage=?", (stage,)) if stage else self._db.execute(sql)
        return [tuple(r) for r in rows]

    def cache_get(self, key: str) -> Any | None:
        row = self._db.execute("SELECT value FROM llm_cache WHERE key=?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def cache_put(self, key: str, value: Any) -> None:
        with self.transaction():
            self._db.execute("INSERT OR REPLACE INTO llm_cache(key, value, created) VALUES (?, ?, ?)",
                             (key, json.dumps(value, ensure_ascii=False), time.time()))

    def add_proposal(self, proposal: Proposal) -> int:
        with self.transaction():
            cur = self._db.execute(
                "INSERT INTO proposals(question, subject, predicate, object, chunk_id, doc_id, status, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (proposal.question, proposal.subject, proposal.predicate, proposal.object, proposal.chunk_id,
                 proposal.doc_id, proposal.status, time.time()))
            assert cur.lastrowid is not None  # (an INSERT always sets it)
            return cur.lastrowid

    def list_proposals(self, status: str | None = None) -> list[Proposal]:
        sql = "SELECT id, question, subject, predicate, object, chunk_id, doc_id, status FROM proposals"
        rows = self._db.execute(sql + " WHERE status=? ORDER BY id", (status,)) if status else \
            self._db.execute(sql + " ORDER BY id")
        return [proposal_from_row(r) for r in rows]

    def set_proposal_status(self, proposal_id: int, status: str) -> None:
        with self.transaction():
            self._db.execute("UPDATE proposals SET status=? WHERE id=?", (status, proposal_id))

    def record_usage(self, step: str, calls: int, prompt_tokens: int, completion_tokens: int,
                     seconds: float) -> None:
        with self.transaction():
            self._db.execute(
                "INSERT INTO usage VALUES (?, ?, ?, ?, ?) ON CONFLICT(step) DO UPDATE SET"
                " calls=calls+excluded.calls, prompt_tokens=prompt_tokens+excluded.prompt_tokens,"
                " completion_tokens=completion_tokens+excluded.completion_tokens, seconds=seconds+excluded.seconds",
                (step, calls, prompt_tokens, completion_tokens, seconds))

    def usage_totals(self) -> dict[str, dict[str, float]]:
        rows = self._db.execute("SELECT step, calls, prompt_tokens, completion_tokens, seconds FROM usage"
                                " ORDER BY step")
        return {r[0]: {"calls": r[1], "prompt_tokens": r[2], "completion_tokens": r[3], "seconds": r[4]}
                for r in rows}

    def add_audit(self, action: str, payload: dict[str, Any]) -> None:
        with self.transaction():
            self._db.execute("INSERT INTO audit(at, action, payload) VALUES (?, ?, ?)",
                             (time.time(), action, json.dumps(payload, ensure_ascii=False)))

    def list_audit(self, limit: int = 100) -> list[dict[str, Any]]:
        rows = self._db.execute("SELECT id, at, action, payload FROM audit ORDER BY id DESC LIMIT ?", (limit,))
        return [{"id": i, "at": at, "action": action, "payload": json.loads(p)} for i, at, action, p in rows]


    # claims: BEGIN IMMEDIATE makes the read and the write one step across processes -------------
    def claim(self, kind: str, key: str, owner: str, lease_s: float, *, replace: str | None = None) -> bool:
        now = time.time()
        with self.transaction():
            row = self._db.execute("SELECT owner, expires FROM claims WHERE kind=? AND key=?", (kind, key)).fetchone()
            if row is not None and row[0] not in (owner, replace) and row[1] > now:
                return False
            self._db.execute("INSERT OR REPLACE INTO claims(kind, key, owner, expires) VALUES (?, ?, ?, ?)",
                             (kind, key, owner, now + lease_s))
        return True

    def renew_claims(self, owner: str, lease_s: float) -> int:
        with self.transaction():
            expires = time.time() + lease_s
            return self._db.execute("UPDATE claims SET expires=? WHERE owner=?", (expires, owner)).rowcount

    def release_claim(self, kind: str, key: str, owner: str) -> None:
        with self.transaction():
            self._db.execute("DELETE FROM claims WHERE kind=? AND key=? AND owner=?", (kind, key, owner))

    def live_claims(self, kind: str, key: str | None = None) -> dict[str, str]:
        sql = "SELECT key, owner FROM claims WHERE kind=? AND expires > ?"
        args: tuple[Any, ...] = (kind, time.time())
        if key is not None:
            sql, args = sql + " AND key=?", (*args, key)
        return dict(self._db.execute(sql + " ORDER BY key", args).fetchall())

    # the index as rows ------------------------------------------------------------------------
    def dump(self, name: str) -> Iterator[tuple[Any, ...]]:
        part = section(name)
        rows = self._db.execute(select_sql(part, "rowid"))
        if name != "vectors":
            return (tuple(r) for r in rows)
        return ((r[0], np.frombuffer(r[1], dtype=np.float32)) for r in rows)

    def load(self, name: str, rows: Iterable[tuple[Any, ...]]) -> int:
        part = section(name)
        if name == "vectors":
            rows = ((r[0], np.ascontiguousarray(r[1], dtype=np.float32).tobytes()) for r in rows)
        source, done = iter(rows), 0
        with self.transaction():
            while batch := list(islice(source, LOAD_BATCH)):
                self._db.executemany(upsert_sql(part, "?"), batch)
                done += len(batch)
            if name in GRAPH_SECTIONS:
                self._revise()
        return done

