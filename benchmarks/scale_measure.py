"""Measuring helpers for benchmarks/scale.py: peak resident memory per indexing stage, a build of the
scale corpus with per-stage figures, query latencies, Recall@5, and growth exponents."""

from __future__ import annotations

import math
import os
import resource
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scale_corpus import ScaleCorpus

from thinkgraph.config import Settings
from thinkgraph.graph.leiden import modularity
from thinkgraph.index.communities import _entity_graph
from thinkgraph.index.stages import StageTimer
from thinkgraph.models import SourceDocument
from thinkgraph.store.base import GraphStore


def rss_mb() -> float:
    """Resident memory of this process now (VmRSS), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class MemoryTimer(StageTimer):
    """The indexer's stage timer, plus the peak resident memory seen while each stage ran (sampled
    every 50 ms by a thread; stages that overlap share the samples)."""

    def __init__(self) -> None:
        super().__init__()
        self.peaks: dict[str, float] = {}
        self._open: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self._open.append(name)
        try:
            with super().stage(name):
                yield
        finally:
            self._open.remove(name)
            self._note()

    def _note(self) -> None:
        now = rss_mb()
        for name in list(self._open):
            self.peaks[name] = max(self.peaks.get(name, 0.0), now)

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            self._note()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


def scale_settings(embedder: str) -> Settings:
    """The model-free extractor, communities built (ToG-3's layer), the embedder asked for."""
    settings = Settings()
    settings.index.extractor = "nolm"
    settings.index.communities = "always"
    settings.index.view_cache = True
    if embedder == "hashing":
        settings.embedding.provider = "hashing"
    return settings


def documents(corpus: ScaleCorpus, skip: set[str] | None = None) -> Iterator[SourceDocument]:
    for p in corpus.passages():
        if skip is None or p["id"] not in skip:
            yield SourceDocument(id=p["id"], title=p["title"], text=p["text"], source="scale-corpus")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]


@dataclass
class Latencies:
    values_ms: list[float] = field(default_factory=list)

    def add(self, started: float) -> None:
        self.values_ms.append(1000 * (time.perf_counter() - started))

    def summary(self) -> dict[str, float]:
        return {"p50_ms": round(statistics.median(self.values_ms), 2),
                "p95_ms": round(percentile(self.values_ms, 95), 2), "n": len(self.values_ms)}


def exponent(small: tuple[int, float], large: tuple[int, float]) -> float | None:
    """The growth exponent b of t = a * n**b between two sizes (None when a time is ~0)."""
    (n1, t1), (n2, t2) = small, large
    if t1 <= 0.05 or t2 <= 0 or n1 == n2:
        return None
    return math.log(t2 / t1) / math.log(n2 / n1)


def recall_at(ranked: list[str], gold: list[str], k: int) -> float:
    return len(set(ranked[:k]) & set(gold)) / len(gold) if gold else 0.0


def process_status() -> dict[str, Any]:
    """This process's memory: RSS, its peak, and RSS split into private memory (anonymous) and pages of
    files it maps (the view cache's arrays: shared with every process that maps them, and the OS's)."""
    split = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile"):
                split[f"{key.lower()}_mb"] = round(int(value.split()[0]) / 1024)
    return {"pid": os.getpid(), "rss_mb": round(rss_mb()), "peak_rss_mb": round(peak_rss_mb()), **split}


def top_modularity(store: GraphStore) -> float:
    """Modularity of the stored top-level communities over the entity graph (the incremental checks)."""
    graph = _entity_graph(store)
    index = {n.id: i for i, n in enumerate(graph.nodes)}
    top = {n.id for n in store.iter_nodes("community") if n.props.get("level") == 0}
    members: dict[str, list[int]] = {}
    for e in store.iter_edges(["SUMMARY_FOR"]):
        if e.src in top:
            members.setdefault(e.src, []).append(index[e.dst])
    return modularity(len(graph.nodes), graph.edges, graph.weights, list(members.values()))
