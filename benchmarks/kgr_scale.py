"""Typed-graph scale: build, open and act on synthetic GRBench-format graphs of 10^5, 10^6 and
5 x 10^6 nodes. Each phase runs in its own process so that its resident memory is its own.

    .venv/bin/python benchmarks/kgr_scale.py --sizes 100000,1000000,5000000 --work /tmp/kgr-scale

Prints, per size: import time and peak memory (streaming graph.json -> CSR + features + vector
index), open time and memory, and action latencies (median / P95 / P99 over --actions random
calls of each agent action), then memory after the actions. Node texts are embedded with the
model-free hashing embedder (384 dimensions, as MiniLM): a neural model over 5 M node texts takes
hours on two cores, and the search cost over the index does not depend on where vectors came from."""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build(source: Path, target: Path) -> dict:
    from thinkgraph.embed.hashing import HashingEmbedder
    from thinkgraph.typedkg import TypedGraphBuilder
    from thinkgraph.typedkg.importers import load_grbench

    started = time.perf_counter()
    builder = TypedGraphBuilder()
    load_grbench(source, builder)
    parsed = time.perf_counter() - started
    builder.write(target, HashingEmbedder(384))
    return {"import_s": time.perf_counter() - started, "parse_s": parsed, "build_peak_mb": peak_mb()}


def act(target: Path, actions: int) -> dict:
    from thinkgraph.embed.hashing import HashingEmbedder
    from thinkgraph.methods.kgr.actions import Action, GraphEnvironment
    from thinkgraph.typedkg import TypedGraph

    before = rss_mb()
    started = time.perf_counter()
    graph = TypedGraph(target, HashingEmbedder(384))
    graph.search("warm up", 1)  # opens the vector index (memory-mapped)
    open_s = time.perf_counter() - started
    opened = rss_mb()
    env = GraphEnvironment(graph)
    rng = np.random.default_rng(1)
    papers = [f"p{i}" for i in rng.integers(0, int(graph.node_count * 0.7), size=actions)]
    titles = [graph.text(graph.resolve(p)) for p in papers]
    plans = {"RetrieveNode": [Action("RetrieveNode", (t,)) for t in titles],
             "NodeFeature": [Action("NodeFeature", (p, "title")) for p in papers],
             "NeighborCheck": [Action("NeighborCheck", (p, "cited_by")) for p in papers],
             "NodeDegree": [Action("NodeDegree", (p, "author")) for p in papers]}
    latency, hits = {}, 0
    for name, plan in plans.items():
        times = []
        for i, action in enumerate(plan):
            t0 = time.perf_counter()
            observation = env.run_one(action)
            times.append(1000 * (time.perf_counter() - t0))
            if name == "RetrieveNode":
                hits += observation.nodes[:1] == [papers[i]]
        times.sort()
        latency[name] = {"p50": statistics.median(times), "p95": times[int(0.95 * (len(times) - 1))],
                         "p99": times[int(0.99 * (len(times) - 1))]}
    return {"open_s": open_s, "rss_before_mb": before, "rss_open_mb": opened, "rss_after_mb": rss_mb(),
            "latency_ms": latency, "retrieve_top1": hits / actions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100000,1000000,5000000")
    parser.add_argument("--work", type=Path, default=Path("/tmp/kgr-scale"))
    parser.add_argument("--actions", type=int, default=1000)
    parser.add_argument("--phase", choices=["all", "build", "act"], default="all")
    parser.add_argument("--size", type=int)
    args = parser.parse_args()
    if args.phase != "all":
        source, target = args.work / f"g{args.size}.json", args.work / f"g{args.size}.kg"
        result = build(source, target) if args.phase == "build" else act(target, args.actions)
        print(json.dumps(result))
        return
    args.work.mkdir(parents=True, exist_ok=True)
    here = Path(__file__).resolve().parent
    for size in (int(s) for s in args.sizes.split(",")):
        source = args.work / f"g{size}.json"
        if not source.exists():
            t0 = time.perf_counter()
            made = json.loads(subprocess.check_output([sys.executable, str(here / "grbench_synth.py"), "--nodes",
                                                       str(size), "--out", str(source)]))
            print(f"generated {made['nodes']} nodes / {made['edges']} edges "
                  f"({source.stat().st_size / 1e9:.2f} GB) in {time.perf_counter() - t0:.0f} s", flush=True)
        phases = {}
        for phase in ("build", "act"):
            out = subprocess.check_output([sys.executable, __file__, "--phase", phase, "--size", str(size),
                                           "--work", str(args.work), "--actions", str(args.actions)])
            phases[phase] = json.loads(out.splitlines()[-1])
        b, a = phases["build"], phases["act"]
        disk = sum(f.stat().st_size for f in (args.work / f"g{size}.kg").rglob("*") if f.is_file()) / 1e9
        print(f"\n{size} nodes: import {b['import_s']:.0f} s (parse {b['parse_s']:.0f} s), build peak "
              f"{b['build_peak_mb']:.0f} MB, on disk {disk:.2f} GB")
        print(f"  open {1000 * a['open_s']:.0f} ms; RSS {a['rss_before_mb']:.0f} MB before, {a['rss_open_mb']:.0f} MB "
              f"open, {a['rss_after_mb']:.0f} MB after {args.actions} x 4 actions; RetrieveNode top-1 = "
              f"{100 * a['retrieve_top1']:.0f} %")
        for name, lat in a["latency_ms"].items():
            print(f"  {name:13s} p50 {lat['p50']:.3f} ms  p95 {lat['p95']:.3f} ms  p99 {lat['p99']:.3f} ms")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
