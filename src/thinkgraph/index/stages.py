"""Crash-consistent derived stages and per-stage timings.

Every change to the extracted graph bumps the index's *graph version* in the same transaction as
the change. Each derived stage (vectors, synonyms, communities) records, when it completes, the
graph version it was built for. A stage whose record differs from the current version is stale or
missing: `thinkgraph index` rebuilds it, and asking refuses to answer from it. A kill at any point
therefore leaves either a complete index or one that says which stage to finish.

Both live in the index manifest (meta keys), so every store backend keeps them without a new
operation.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from thinkgraph.errors import IncompleteIndexError
from thinkgraph.store.base import GraphStore
from thinkgraph.store.claims import process_alive
from thinkgraph.store.common import DERIVED_STALE

# In the order they are built: entity vectors feed synonyms, synonyms feed communities.
DERIVED_STAGES = ("vectors", "synonyms", "communities")
VERSION_META = "graph_version"
STALE_META = DERIVED_STALE  # "1": every derived stage is stale and unusable (set by document removals)
# "1": the graph grew outside an indexing run (an approved review, ToG-3's write-back). The stages still
# serve (the new nodes are only not yet in synonyms and communities); the next `index` rebuilds them.
OUTDATED_META = "derived_outdated"
TIMINGS_META = "stage_timings"
WRITERS_META = "index_writers"  # pids of the processes indexing now (they finish the stages)
WAIT_FOR_WRITER_S = 60.0  # how long an ask waits for a running writer to finish the stages
COMMUNITIES_META = "communities_built"  # "0" when the communities stage was skipped by configuration
FINISH_COMMAND = "thinkgraph index"


def _stage_meta(stage: str) -> str:
    return f"stage.{stage}"


def graph_version(store: GraphStore) -> int | None:
    value = store.get_meta(VERSION_META)
    return None if value is None else int(value)


def bump_graph_version(store: GraphStore) -> int:
    """Mark the extracted graph changed; call inside the transaction that changes it."""
    version = (graph_version(store) or 0) + 1
    store.set_meta(VERSION_META, str(version))
    return version


def mark_outdated(store: GraphStore) -> None:
    """The graph grew outside an indexing run; call inside the transaction that adds to it."""
    store.set_meta(OUTDATED_META, "1")


def is_outdated(store: GraphStore) -> bool:
    return store.get_meta(OUTDATED_META) == "1"


def absorb_stale_flag(store: GraphStore) -> None:
    """Turn the stale and outdated flags (document removal; additions outside indexing) into a new
    graph version, whose stages the caller then builds."""
    if store.get_meta(STALE_META) == "1" or is_outdated(store):
        with store.transaction():
            bump_graph_version(store)
            store.set_meta(STALE_META, "0")
            store.set_meta(OUTDATED_META, "0")


def record_stage(store: GraphStore, stage: str, version: int) -> None:
    store.set_meta(_stage_meta(stage), str(version))


def missing_stages(store: GraphStore) -> list[str]:
    """Derived stages not built for the current graph version, in build order."""
    stale_all = store.get_meta(STALE_META) == "1"
    version = graph_version(store)
    if version is None:  # an empty index, or one from before stage records (complete unless flagged)
        return list(DERIVED_STAGES) if stale_all else []
    if stale_all:
        return list(DERIVED_STAGES)
    return [s for s in DERIVED_STAGES if store.get_meta(_stage_meta(s)) != str(version)]


def communities_wanted(store: GraphStore, setting: str) -> bool:
    """Whether the communities stage builds communities (see IndexSettings.communities)."""
    if setting == "auto":
        return store.get_meta("extractor") != "import"
    return setting == "always"


def require_complete(store: GraphStore, *, needs_communities: bool = False,
                     missing: list[str] | None = None) -> None:
    """One-line error when a derived stage is missing (e.g. indexing was killed before the end), or
    when the method reads communities and the index was built without them. ``missing``: what
    ``wait_until_complete`` saw last (checking again could meet a newer change it did not wait for)."""
    missing = missing_stages(store) if missing is None else missing
    if missing and (running := [pid for pid in _writers(store) if process_alive(pid)]):
        # `thinkgraph index` here would only start a second writer
        raise IncompleteIndexError(
            f"an indexing run (pid {running[0]}) is changing this index and has not finished its derived "
            f"stage(s) {', '.join(missing)} within {WAIT_FOR_WRITER_S:.0f} s; ask again when it ends")
    if missing:
        raise IncompleteIndexError(
            f"the index is missing derived stage(s) {', '.join(missing)} (indexing did not finish); "
            f"run `{FINISH_COMMAND}` on this index to finish it")
    if needs_communities and store.get_meta(COMMUNITIES_META) == "0":
        raise IncompleteIndexError(
            "this index was built without communities ([index] communities; skipped by default for imported "
            "graphs); set communities = \"always\" and run `thinkgraph index` again, or ask with "
            "-o use_communities=false")


def _writers(store: GraphStore) -> list[int]:
    return [int(p) for p in json.loads(store.get_meta(WRITERS_META) or "[]")]


@contextmanager
def writing(store: GraphStore) -> Iterator[None]:
    """Marks this process as indexing, so that readers wait for the stages instead of failing
    (a killed writer's mark is ignored: its pid is gone)."""
    pid = os.getpid()
    with store.transaction():
        store.set_meta(WRITERS_META, json.dumps(sorted([pid, *(p for p in _writers(store) if process_alive(p))])))
    try:
        yield
    finally:
        with store.transaction():  # one entry off: a nested or concurrent writer of this process stays
            rest = [p for p in _writers(store) if process_alive(p)]
            if pid in rest:
                rest.remove(pid)
            store.set_meta(WRITERS_META, json.dumps(rest))


async def wait_until_complete(store: GraphStore, timeout_s: float | None = None) -> list[str]:
    """While another live process is indexing (e.g. a service worker adding a document), wait for
    it to finish the derived stages (at most ``timeout_s``, default WAIT_FOR_WRITER_S). Returns the
    stages still missing at the last look (none once a complete version was seen, even if a writer
    changed the graph right after)."""
    deadline = time.monotonic() + (WAIT_FOR_WRITER_S if timeout_s is None else timeout_s)
    while True:
        missing = missing_stages(store)
        if not missing or time.monotonic() >= deadline:
            return missing
        if not any(process_alive(p) for p in _writers(store)):  # (our own pid: a writer thread, as a service's)
            # Looked at again: a writer records its stages before it takes its mark off, so one that
            # finished between the two reads left them complete (a service's ask had failed with 503).
            return missing_stages(store)
        await asyncio.sleep(0.05)


@dataclass(slots=True)
class StageTimer:
    """Wall seconds per stage; ``busy`` accumulates work that overlaps other stages (the embedding
    worker runs beside the LLM calls), so its figure is the worker's own time, not added wall time."""

    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - started)

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def rounded(self) -> dict[str, float]:
        return {k: round(v, 3) for k, v in self.seconds.items()}


def store_timings(store: GraphStore, timings: dict[str, float]) -> None:
    store.set_meta(TIMINGS_META, json.dumps(timings))


def load_timings(store: GraphStore) -> dict[str, float]:
    raw = store.get_meta(TIMINGS_META)
    return json.loads(raw) if raw else {}
