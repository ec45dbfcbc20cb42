"""PPR on a large synthetic graph: the exact solver and local push against scipy power iteration
(transpose prebuilt) and fast-pagerank, measured side by side in one process.

The graph: ``n`` nodes and about ``nnz`` stored adjacency entries (each undirected edge stored
both ways, as the entity-passage graph is): half the edges join nearby ids (communities), half
join a node to a skewed random one (hubs, as entity mentions are)."""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
import scipy.sparse as sp

from thinkgraph.graph.local_ppr import LocalGraph, local_ppr
from thinkgraph.graph.ppr import DEFAULT_TOL, build_operator, solve


def synthetic_graph(n: int, nnz: int, seed: int = 0) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    m = nnz // 2
    u = rng.integers(0, n, m)
    local = rng.random(m) < 0.5
    hub = (n * rng.random(m) ** 3).astype(np.int64)
    v = np.where(local, (u + rng.integers(1, 64, m)) % n, hub)
    keep = u != v
    u, v = u[keep], v[keep]
    a = sp.csr_matrix((np.ones(2 * u.shape[0]), (np.r_[u, v], np.r_[v, u])), shape=(n, n))
    a.sum_duplicates()
    a.data[:] = 1.0
    return a


def scipy_power(pt: sp.csr_matrix, dangling: np.ndarray, p: np.ndarray, d: float, tol: float) -> np.ndarray:
    """The plain baseline: power iteration on a prebuilt Pᵀ with the same L1 stop rule."""
    x = p.copy()
    for _ in range(1000):
        x_next = d * (pt @ x + x[dangling].sum() * p) + (1 - d) * p
        err = np.abs(x_next - x).sum()
        x = x_next
        if err < tol:
            break
    return x / x.sum()


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


@dataclass
class PPRFigures:
    n: int
    nnz: int
    rows: list[tuple[str, float, str, float]]  # (goal, ours, baseline, baseline figure)
    overlap: dict[float, float]


BENCH_INSTALL = "pip install -e '.[bench]'"  # fast-pagerank, py-spy, pyinstrument (docs/scaling.md)


def require_bench(otherwise: str = "") -> None:
    """The fast-pagerank baseline comes with the bench extra: one line saying how to install it,
    before any work starts, rather than a traceback minutes in."""
    if importlib.util.find_spec("fast_pagerank") is None:
        sys.exit(f"the PPR benchmark compares with fast-pagerank, which is not installed: {BENCH_INSTALL} "
                 f"(the bench extra){otherwise}")


def top(x: np.ndarray, k: int) -> set[int]:
    return set(np.argpartition(-x, k)[:k].tolist())


def run(n: int, nnz: int, runs: int, seeds: int = 5) -> PPRFigures:
    import fast_pagerank

    a = synthetic_graph(n, nnz)
    rng = np.random.default_rng(1)
    op = build_operator(a)
    deg = np.asarray(a.sum(axis=1)).ravel()
    pt = sp.csr_matrix((sp.diags(1 / np.maximum(deg, 1e-300)) @ a).T)
    dangling = deg == 0
    local = LocalGraph.of(a)
    rows: list[tuple[str, float, str, float]] = []
    overlap: dict[float, float] = {}
    for d in (0.5, 0.85):
        times: dict[str, list[float]] = {"ours": [], "scipy": [], "fast": [], "push": []}
        hits = []
        for _ in range(runs):  # interleaved, so that load changes hit every solver alike
            seeds_here = rng.choice(n, seeds, replace=False)
            p = np.zeros(n)
            p[seeds_here] = 1.0 / seeds
            seed_map = {int(i): 1.0 for i in seeds_here}
            times["ours"].append(timed(partial(solve, op, p, damping=d)))
            times["scipy"].append(timed(partial(scipy_power, pt, dangling, p, d, DEFAULT_TOL)))
            times["fast"].append(timed(partial(fast_pagerank.pagerank_power, a, p=d, personalize=p)))
            times["push"].append(timed(partial(local_ppr, local, seed_map, damping=d)))
            exact = solve(op, p, damping=d, tol=1e-10, max_iter=1000)
            nodes, _ = local_ppr(local, seed_map, damping=d)
            hits.append(len(top(exact, 100) & set(nodes[:100].tolist())) / 100)
        med = {k: statistics.median(v) for k, v in times.items()}
        rows.append((f"PPR exact d={d} (s/query)", med["ours"], "scipy power, Pᵀ prebuilt", med["scipy"]))
        rows.append((f"PPR exact d={d} (s/query)", med["ours"], "fast-pagerank pagerank_power", med["fast"]))
        rows.append((f"PPR local push d={d} (s/query)", med["push"], "exact solver", med["ours"]))
        overlap[d] = statistics.mean(hits)
    return PPRFigures(n, int(a.nnz), rows, overlap)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--nnz", type=int, default=14_000_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    require_bench()
    figures = run(args.nodes, args.nnz, args.runs)
    print(f"graph: {figures.n} nodes, {figures.nnz} adjacency entries")
    for goal, ours, name, base in figures.rows:
        print(f"{goal:36s} {ours:8.4f}   {name:32s} {base:8.4f}   x{base / ours:5.2f}")
    print("top-100 overlap local push vs exact:", figures.overlap)
