"""Tables from the JSON files benchmarks/scale.py writes: build per stage (seconds, peak memory) with the
growth exponent between sizes, queries, and the incremental costs against the full build."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scale_measure import exponent

# The stages of a build as the indexer's timer names them (index/pipeline.py, derived.py, communities.py).
STAGES = ("extract", "embed entities (tail after extraction)", "synonyms", "communities (Leiden)",
          "communities (write)", "embed (tail after the derived stages)", "embed tail: the worker's queue",
          "embed tail: finding nodes without vectors", "embed tail: nodes without vectors",
          "embed tail: encoding", "embed tail: writing", "embed (worker busy, overlapped)")


def _load(folder: Path, kind: str) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for path in sorted(folder.glob(f"{kind}*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out[int(data["passages"])] = data
    return out


def _build_table(builds: dict[int, dict[str, Any]]) -> None:
    sizes = sorted(builds)
    print("| stage | " + " | ".join(f"{n:,}: s (peak MB)" for n in sizes) + " | "
          + " | ".join(f"exponent {a // 1000}k→{b // 1000}k" for a, b in zip(sizes, sizes[1:], strict=False)) + " |")
    print("|---" * (1 + len(sizes) + max(0, len(sizes) - 1)) + "|")
    for stage in (*STAGES, "total"):
        cells, times = [], []
        for n in sizes:
            b = builds[n]
            seconds = b["seconds"] if stage == "total" else b["stages"].get(stage, 0.0)
            peak = b["peak_rss_mb"] if stage == "total" else b["stage_peak_rss_mb"].get(stage)
            times.append((n, seconds))
            cells.append(f"{seconds:,.1f}" + (f" ({peak:,})" if peak else ""))
        exps = [exponent(a, b) for a, b in zip(times, times[1:], strict=False)]
        print(f"| {stage} | " + " | ".join(cells) + " | "
              + " | ".join("–" if e is None else f"{e:.2f}" for e in exps) + " |")


def _query_table(queries: dict[int, dict[str, Any]], builds: dict[int, dict[str, Any]]) -> None:
    print("| passages | ppr p50 / p95 ms (warm) | dense p50 / p95 ms | cold ask s (empty cache / cached) | "
          "query process RSS MB (private + mapped view) | R@5 ppr | R@5 ppr, exact walk (p50 ms) | R@5 dense | "
          "index MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in sorted(queries):
        q = queries[n]
        size = builds.get(n, {}).get("size_mb", "–")
        serving, exact = q["serving"], q.get("ppr_exact")
        memory = f"{serving['rss_mb']:,}" + (f" ({serving['rssanon_mb']:,} + {serving['rssfile_mb']:,})"
                                             if "rssanon_mb" in serving else "")
        walk = f"{exact['recall_at_5']} ({exact['p50_ms']:.0f})" if exact else "–"
        print(f"| {n:,} | {q['ppr']['p50_ms']} / {q['ppr']['p95_ms']} | {q['naive']['p50_ms']} / "
              f"{q['naive']['p95_ms']} | {q['cold_ask']['first_s']} / {q['cold_ask']['cached_s']} | "
              f"{memory} | {q['ppr']['recall_at_5']} | {walk} | {q['naive']['recall_at_5']} | {size} |")


def _incremental_table(changes: dict[int, dict[str, Any]], builds: dict[int, dict[str, Any]]) -> None:
    print("| passages | documents | add s (% of build) | remove s (% of build) | retrieval view after s "
          "(passages' graph; whole view before) | synonyms searched | communities rewritten / all | "
          "SYNONYM edges as before | modularity before → after |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in sorted(changes):
        c, full = changes[n], builds[n]["seconds"]
        print(f"| {n:,} | {c['changed_documents']} | {c['add_s']} ({100 * c['add_s'] / full:.1f}%) | "
              f"{c['remove_s']} ({100 * c['remove_s'] / full:.1f}%) | {c.get('view_s', '–')} "
              f"({c.get('passages_graph', '–')}; {c.get('view_before_s', '–')}) | "
              f"{c['synonyms_searched']} | "
              f"{c['communities_written']} / {c['communities']} | {c['same_synonyms']} | "
              f"{c['modularity_before']} → {c['modularity_after']} |")


def print_report(folders: list[Path]) -> None:
    for folder in folders:
        builds = _load(folder, "build")
        if not builds:
            continue
        embedder = next(iter(builds.values()))["embedder"]
        print(f"\n### {folder} (embedder {embedder})\n")
        _build_table(builds)
        queries = _load(folder, "query")
        if queries:
            print()
            _query_table(queries, builds)
        changes = _load(folder, "incremental")
        if changes:
            print()
            _incremental_table(changes, builds)
