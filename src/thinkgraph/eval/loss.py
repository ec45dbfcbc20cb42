"""Extraction-loss stress test (A2RAG §IV-F): a copy of the index with a fraction of its entity nodes
deleted (with their edges and vectors), chosen by a fixed seed, so that retrieval can be re-measured
on a graph that lost part of its extraction. The original index is never touched."""

from __future__ import annotations

import logging
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thinkgraph.api import ThinkGraph
from thinkgraph.errors import ConfigError
from thinkgraph.eval.datasets import Question
from thinkgraph.eval.runner import EvalRunner, MethodSpec
from thinkgraph.models import NodeType
from thinkgraph.store.base import GraphStore
from thinkgraph.store.copy import copy_to_file
from thinkgraph.store.factory import open_store

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LossSetting:
    fraction: float
    seed: int

    @property
    def suffix(self) -> str:
        return f"@loss={self.fraction:g}/seed={self.seed}"


def parse_fractions(text: str) -> list[float]:
    try:
        fractions = [float(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise ConfigError(f"--extraction-loss takes fractions like 0.1,0.2 (got {text!r})") from exc
    bad = [f for f in fractions if not 0 <= f < 1]
    if bad:
        raise ConfigError(f"an extraction-loss fraction must be in [0, 1): {bad[0]}")
    return fractions


def loss_settings(fractions: list[float], seeds: int) -> list[LossSetting]:
    """One setting per (fraction, seed); 0 needs no seeds since nothing is deleted."""
    return [LossSetting(f, s) for f in fractions for s in (range(seeds) if f > 0 else [0])]


def degraded_copy(source: GraphStore, target: Path, setting: LossSetting) -> int:
    """Write a copy of ``source`` to ``target`` without ``fraction`` of its entities; returns how many
    entities were deleted. Entities are sampled from the sorted id list, so a seed means one choice."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    copy_to_file(source, target)  # a local SQLite copy, whichever store holds the index
    store = open_store(target, create=False)  # a path: the copy opens as the SQLite file it is
    try:
        ids = sorted(n.id for n in store.iter_nodes(NodeType.ENTITY))
        doomed = random.Random(setting.seed).sample(ids, round(setting.fraction * len(ids)))
        with store.transaction():
            for node_id in doomed:
                store.delete_node(node_id)
        return len(doomed)
    finally:
        store.close()


async def run_extraction_loss(tg: ThinkGraph, specs: Sequence[MethodSpec], out_dir: str | Path,
                              questions: Sequence[Question], settings: Sequence[LossSetting], *,
                              concurrency: int = 4) -> list[dict[str, Any]]:
    """Retrieval-only runs of every spec on a degraded copy per setting; records go to the same
    records.jsonl (labels carry the setting, so a killed run resumes), copies are deleted when done.
    Returns one row per (method, fraction) with Recall@k averaged over the seeds."""
    out = Path(out_dir)
    rows_by_setting: list[tuple[LossSetting, list[dict[str, Any]]]] = []
    for setting in settings:
        shifted = [MethodSpec(spec.label + setting.suffix, spec.method, spec.options) for spec in specs]
        copy_path = out / "loss-indexes" / f"{setting.fraction:g}-{setting.seed}.db"
        probe = EvalRunner(tg, shifted, out, retrieval_only=True, concurrency=concurrency)
        if probe.missing(questions):
            deleted = degraded_copy(tg.store, copy_path, setting)
            log.info("extraction loss %s: %d entities deleted", setting.suffix, deleted)
            with ThinkGraph(copy_path, settings=tg.settings, create=False, embedder=tg.embedder) as degraded:
                await EvalRunner(degraded, shifted, out, retrieval_only=True, concurrency=concurrency).run(questions)
            copy_path.unlink(missing_ok=True)
            for leftover in copy_path.parent.glob(copy_path.name + "-*"):
                leftover.unlink()  # SQLite's -wal / -shm files
        rows_by_setting.append((setting, probe.summary(questions)))
    copies = out / "loss-indexes"
    if copies.is_dir() and not any(copies.iterdir()):
        copies.rmdir()
    return average_over_seeds(specs, rows_by_setting)


def average_over_seeds(specs: Sequence[MethodSpec],
                       rows_by_setting: Sequence[tuple[LossSetting, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    grouped: dict[tuple[str, float], list[dict[str, Any]]] = {}
    for setting, rows in rows_by_setting:
        for spec, row in zip(specs, rows, strict=True):
            grouped.setdefault((spec.label, setting.fraction), []).append(row)
    out = []
    for (label, fraction), rows in grouped.items():
        keys = [k for k in rows[0] if k.startswith("recall@")]
        variant = {"variant": rows[0]["variant"]} if rows[0].get("variant") else {}
        out.append({"method": label, "fraction": fraction, "seeds": len(rows), **variant,
                    **{k: statistics.mean(r.get(k, 0.0) for r in rows) for k in keys}})
    return out
