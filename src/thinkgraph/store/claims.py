"""Work shared by processes over one index (several `thinkgraph index` runs, service workers on
several hosts): each document is claimed by one process at a time with a lease in the store that a
background thread renews; a lease whose holder died expires (at once when the holder was a process
of this machine that no longer exists), so another process takes the work over. The derived stages
(synonyms, communities) are built by one process at a time, and only when the graph changed since
they were last built, so runs finishing together build them once."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from thinkgraph.models import SourceDocument
from thinkgraph.store.base import GraphStore
from thinkgraph.store.common import CHANGES, DERIVED_STALE

log = logging.getLogger(__name__)

DEFAULT_LEASE_S = 60.0  # renewed every quarter of it while the holder lives
RUN, DOC, DERIVED = "run", "doc", "derived"  # claim kinds: an indexing run, a document, the derived stages
DERIVED_AT = "derived_at"  # the CHANGES count the derived stages were last built from


@lru_cache(maxsize=1)
def _machine() -> str:
    """This host, told apart from containers that share its name (boot id and pid namespace)."""
    marks = [socket.gethostname()]
    for source in (Path("/proc/sys/kernel/random/boot_id"), Path("/proc/self/ns/pid")):
        try:
            marks.append(source.read_text().strip() if source.is_file() else str(source.stat().st_ino))
        except OSError:
            continue
    return f"{socket.gethostname()}-{hashlib.sha256('|'.join(marks).encode()).hexdigest()[:8]}"


def process_owner() -> str:
    return f"{_machine()}:{os.getpid()}:{secrets.token_hex(4)}"


def holder_is_dead(owner: str) -> bool:
    """True only for a holder on this machine whose process is gone (others wait for the lease)."""
    machine, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if machine != _machine() or not pid.isdigit():
        return False
    return not process_alive(int(pid))


def process_alive(pid: int) -> bool:
    """Whether a process of this machine runs (another user's counts; a killed, unreaped one does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    try:  # killed but not yet reaped by its parent
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


@dataclass
class WorkClaims:
    """The claims of one process on one store; ``start()`` renews them in the background, ``stop()``
    releases what is still held."""

    store: GraphStore
    lease_s: float = DEFAULT_LEASE_S
    owner: str = field(default_factory=process_owner)
    held: set[tuple[str, str]] = field(default_factory=set)
    deferred: list[SourceDocument] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _beat: threading.Thread | None = None

    def start(self, *, register: bool = True) -> WorkClaims:
        """Start renewing; ``register`` announces an indexing run (see ``others_running``)."""
        self._stop.clear()
        if register:
            self.take(RUN, self.owner)
        self._beat = threading.Thread(target=self._renew, name="thinkgraph-lease", daemon=True)
        self._beat.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
        for kind, key in sorted(self.held):
            self.release(kind, key)

    def _renew(self) -> None:
        while not self._stop.wait(self.lease_s / 4):
            try:
                self.store.renew_claims(self.owner, self.lease_s)
            except Exception as exc:  # noqa: BLE001 - a missed renewal is retried; the thread must live on
                log.warning("could not renew work leases: %s", exc)

    # one item -------------------------------------------------------------------------------
    def take(self, kind: str, key: str) -> bool:
        if not self.store.claim(kind, key, self.owner, self.lease_s):
            holder = self.store.live_claims(kind, key).get(key)
            if holder is None or not holder_is_dead(holder):
                return False
            if not self.store.claim(kind, key, self.owner, self.lease_s, replace=holder):
                return False
            log.info("took over %s %s from %s, which is no longer running", kind, key, holder)
        self.held.add((kind, key))
        return True

    def release(self, kind: str, key: str) -> None:
        self.store.release_claim(kind, key, self.owner)
        self.held.discard((kind, key))

    def _poll_s(self) -> float:
        return min(1.0, self.lease_s / 10)

    async def wait_take(self, kind: str, key: str) -> None:
        while not self.take(kind, key):
            await asyncio.sleep(self._poll_s())

    @contextmanager
    def holding(self, kind: str, key: str) -> Iterator[None]:
        """Hold one item for a short synchronous change (waiting for its current holder)."""
        while not self.take(kind, key):
            time.sleep(self._poll_s())
        try:
            yield
        finally:
            self.release(kind, key)

    # documents of an indexing run ---------------------------------------------------------------
    def take_document(self, doc: SourceDocument) -> bool:
        """Claim a document; one held elsewhere is deferred (see ``take_over``)."""
        if self.take(DOC, doc.id):
            return True
        self.deferred.append(doc)
        return False

    def release_document(self, doc_id: str) -> None:
        self.release(DOC, doc_id)

    def finished(self, doc_ids: list[str]) -> None:
        """Documents processed: the graph changed (the derived stages are due), the claims go."""
        self.store.increment_meta(CHANGES)
        for doc_id in doc_ids:
            self.release(DOC, doc_id)

    async def take_over(self) -> AsyncIterator[SourceDocument]:
        """The deferred documents, each claimed once its holder let go (finished it or died)."""
        deferred, self.deferred = self.deferred, []
        for doc in deferred:
            await self.wait_take(DOC, doc.id)
            yield doc

    def others_running(self) -> bool:
        """Ends this run's registration; whether another indexing run is still going (it then builds
        the derived stages when it ends, so this one need not)."""
        self.release(RUN, self.owner)
        return any(not holder_is_dead(owner) for owner in self.store.live_claims(RUN).values())


@dataclass
class DerivedTurn:
    """One process's turn at the derived stages: ``needed`` unless another built them since the
    last change; ``built()`` records which changes they now reflect."""

    store: GraphStore
    force: bool = False

    def __post_init__(self) -> None:
        self.changes = self.store.get_meta(CHANGES) or "0"

    @property
    def needed(self) -> bool:
        return (self.force or self.store.get_meta(DERIVED_STALE) == "1"
                or self.changes != (self.store.get_meta(DERIVED_AT) or "0"))

    def built(self) -> None:
        self.store.set_meta(DERIVED_AT, self.changes)


@asynccontextmanager
async def derived_turn(store: GraphStore, *, force: bool = False) -> AsyncIterator[DerivedTurn]:
    """Wait for the derived-stages lease (held while building, renewed in the background)."""
    claims = WorkClaims(store).start(register=False)
    try:
        await claims.wait_take(DERIVED, DERIVED)
        yield DerivedTurn(store, force)
    finally:
        claims.stop()
