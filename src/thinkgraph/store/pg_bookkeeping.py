"""The bookkeeping half of the PostgreSQL store: stage markers, failures, the LLM cache, HITL proposals,
usage, the audit log, work claims (``SELECT ... FOR UPDATE SKIP LOCKED`` with leases on the server's
clock) and the copy sections. Mixed into :class:`PostgresStore`, whose connection it uses."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from itertools import islice
from typing import Any

import numpy as np
import psycopg

from thinkgraph.models import Proposal
from thinkgraph.store.common import GRAPH_SECTIONS, proposal_from_row, section, select_sql, upsert_sql

LOAD_BATCH = 2000
_LEASE = "clock_timestamp() + make_interval(secs => %s)"


class PgBookkeeping:
    # provided by PostgresStore
    _conn: psycopg.Connection
    _lock: threading.RLock
    _rows: Callable[..., list[tuple[Any, ...]]]
    _run: Callable[..., int]
    _many: Callable[[str, list[tuple[Any, ...]]], None]
    put_vectors: Callable[..., None]
    transaction: Callable[[], AbstractContextManager[None]]
    _claim_transaction: Callable[[], AbstractContextManager[None]]
    _revise: Callable[[], None]

    def mark_done(self, stage: str, key: str) -> None:
        with self.transaction():
            self._run("INSERT INTO stages(stage, key) VALUES (%s, %s) ON CONFLICT DO NOTHING", (stage, key))

    def is_done(self, stage: str, key: str) -> bool:
        return bool(self._rows("SELECT 1 FROM stages WHERE stage = %s AND key = %s", (stage, key)))

    def record_failure(self, stage: str, key: str, message: str) -> None:
        with self.transaction():
            self._run("INSERT INTO failures(stage, key, message, count) VALUES (%s, %s, %s, 1) ON CONFLICT (stage, key)"
                      " DO UPDATE SET message = excluded.message, count = failures.count + 1",
                      (stage, key, message[:500]))

    def clear_failure(self, stage: str, key: str) -> None:
        with self.transaction():
            self._run("DELETE FROM failures WHERE stage = %s AND key = %s", (stage, key))

    def failure_counts(self) -> dict[str, int]:
        return dict(self._rows("SELECT stage, count(*) FROM failures GROUP BY stage ORDER BY stage"))

    def failures(self, stage: str | None = None) -> list[tuple[str, str, str, int]]:
        query = "SELECT stage, key, message, count FROM failures"
        rows = self._rows(query + " WHERE stage = %s ORDER BY key", (stage,)) if stage else \
            self._rows(query + " ORDER BY stage, key")
        return [tuple(r) for r in rows]

    def cache_get(self, key: str) -> Any | None:
        rows = self._rows("SELECT value FROM llm_cache WHERE key = %s", (key,))
        return json.loads(rows[0][0]) if rows else None

    def cache_put(self, key: str, value: Any) -> None:
        with self.transaction():
            self._run("INSERT INTO llm_cache(key, value, created) VALUES (%s, %s, %s) ON CONFLICT (key)"
                      " DO UPDATE SET value = excluded.value, created = excluded.created",
                      (key, json.dumps(value, ensure_ascii=False), time.time()))

    def add_proposal(self, proposal: Proposal) -> int:
        with self.transaction():
            rows = self._rows(
                "INSERT INTO proposals(question, subject, predicate, object, chunk_id, doc_id, status, created)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (proposal.question, proposal.subject, proposal.predicate, proposal.object, proposal.chunk_id,
                 proposal.doc_id, proposal.status, time.time()))
        return int(rows[0][0])

    def list_proposals(self, status: str | None = None) -> list[Proposal]:
        query = "SELECT id, question, subject, predicate, object, chunk_id, doc_id, status FROM proposals"
        rows = self._rows(query + " WHERE status = %s ORDER BY id", (status,)) if status else \
            self._rows(query + " ORDER BY id")
        return [proposal_from_row(r) for r in rows]

    def set_proposal_status(self, proposal_id: int, status: str) -> None:
        with self.transaction():
            self._run("UPDATE proposals SET status = %s WHERE id = %s", (status, proposal_id))

    def record_usage(self, step: str, calls: int, prompt_tokens: int, completion_tokens: int,
                     seconds: float) -> None:
        with self.transaction():
            self._run("INSERT INTO usage VALUES (%s, %s, %s, %s, %s) ON CONFLICT (step) DO UPDATE SET"
                      " calls = usage.calls + excluded.calls,"
                      " prompt_tokens = usage.prompt_tokens + excluded.prompt_tokens,"
                      " completion_tokens = usage.completion_tokens + excluded.completion_tokens,"
                      " seconds = usage.seconds + excluded.seconds",
                      (step, calls, prompt_tokens, completion_tokens, seconds))

    def usage_totals(self) -> dict[str, dict[str, float]]:
        rows = self._rows("SELECT step, calls, prompt_tokens, completion_tokens, seconds FROM usage ORDER BY step")
        return {r[0]: {"calls": r[1], "prompt_tokens": r[2], "completion_tokens": r[3], "seconds": r[4]}
                for r in rows}

    def add_audit(self, action: str, payload: dict[str, Any]) -> None:
        with self.transaction():
            self._run("INSERT INTO audit(at, action, payload) VALUES (%s, %s, %s)",
                      (time.time(), action, json.dumps(payload, ensure_ascii=False)))

    def list_audit(self, limit: int = 100) -> list[dict[str, Any]]:
        rows = self._rows("SELECT id, at, action, payload FROM audit ORDER BY id DESC LIMIT %s", (limit,))
        return [{"id": i, "at": at, "action": action, "payload": json.loads(p)} for i, at, action, p in rows]

    # claims -------------------------------------------------------------------------------------
    def claim(self, kind: str, key: str, owner: str, lease_s: float, *, replace: str | None = None) -> bool:
        """A new claim is an insert; a held one is locked without waiting (SKIP LOCKED: another process
        is deciding about it right now, so it is not ours) and taken over only once its lease expired."""
        with self._claim_transaction():
            if self._rows(f"INSERT INTO claims(kind, key, owner, expires) VALUES (%s, %s, %s, {_LEASE})"
                          " ON CONFLICT DO NOTHING RETURNING 1", (kind, key, owner, lease_s)):
                return True
            rows = self._rows("SELECT owner, expires > clock_timestamp() FROM claims WHERE kind = %s AND key = %s"
                              " FOR UPDATE SKIP LOCKED", (kind, key))
            if not rows or (rows[0][1] and rows[0][0] not in (owner, replace)):
                return False
            self._run(f"UPDATE claims SET owner = %s, expires = {_LEASE} WHERE kind = %s AND key = %s",
                      (owner, lease_s, kind, key))
        return True

    def renew_claims(self, owner: str, lease_s: float) -> int:
        with self._claim_transaction():
            return self._run(f"UPDATE claims SET expires = {_LEASE} WHERE owner = %s", (lease_s, owner))

    def release_claim(self, kind: str, key: str, owner: str) -> None:
        with self._claim_transaction():
            self._run("DELETE FROM claims WHERE kind = %s AND key = %s AND owner = %s", (kind, key, owner))

    def live_claims(self, kind: str, key: str | None = None) -> dict[str, str]:
        query = "SELECT key, owner FROM claims WHERE kind = %s AND expires > clock_timestamp()"
        if key is None:
            return dict(self._rows(query + " ORDER BY key", (kind,)))
        return dict(self._rows(query + " AND key = %s", (kind, key)))

    # the index as rows --------------------------------------------------------------------------
    def dump(self, name: str) -> Iterator[tuple[Any, ...]]:
        """Rows of one section, streamed through a server-side cursor (one snapshot)."""
        part = section(name)
        vectors = name == "vectors"
        with self._lock, self._claim_transaction(), self._conn.cursor(f"dump_{name}", binary=vectors) as cur:
            cur.itersize = LOAD_BATCH
            cur.execute(select_sql(part, "seq"))
            for row in cur:
                yield (row[0], row[1].to_numpy()) if vectors else tuple(row)

    def load(self, name: str, rows: Iterable[tuple[Any, ...]]) -> int:
        part = section(name)
        done = 0
        source = iter(rows)
        with self.transaction():
            while batch := list(islice(source, LOAD_BATCH)):
                if name == "vectors":
                    self.put_vectors([r[0] for r in batch], np.stack([np.asarray(r[1]) for r in batch]))
                else:
                    self._many(upsert_sql(part, "%s"), [tuple(r) for r in batch])
                done += len(batch)
            if name in GRAPH_SECTIONS:
                self._revise()
            if name in ("proposals", "audit"):  # explicit ids were loaded: new rows number after them
                self._run(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'),"
                          f" (SELECT coalesce(max(id), 0) + 1 FROM {name}), false)")
        return done
