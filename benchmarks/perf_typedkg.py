"""Typed-KG import of a GRBench-format graph (benchmarks/grbench_synth.py) beside `json.load` of
the same file, each in its own process so that its peak resident memory is its own; then
RetrieveNode latency on the imported graph.

    PYTHONPATH=src .venv/bin/python benchmarks/perf_typedkg.py --nodes 1000000 --work /tmp/kg
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def phase_import(source: Path, target: Path) -> dict[str, float]:
    from kgr_scale import build  # the same import as the scale benchmark (hashing embedder)

    built = build(source, target)
    return {"seconds": built["import_s"], "parse_s": built["parse_s"], "peak_mb": built["build_peak_mb"]}


def phase_json_load(source: Path) -> dict[str, float]:
    started = time.perf_counter()
    with source.open("rb") as f:
        json.load(f)
    return {"seconds": time.perf_counter() - started, "peak_mb": _peak_mb()}


def phase_retrieve(target: Path, queries: int = 300) -> dict[str, float]:
    """RetrieveNode latency in a process that has just opened the graph: a first pass of ``queries``
    random titles (the memory-mapped vector index is read as it is searched: cold when another job
    pushed it out of the page cache), then a second pass of other titles (steady state)."""
    import numpy as np

    from thinkgraph.embed.hashing import HashingEmbedder
    from thinkgraph.methods.kgr.actions import Action, GraphEnvironment
    from thinkgraph.typedkg import TypedGraph

    graph = TypedGraph(target, HashingEmbedder(384))
    graph.search("warm up", 1)
    env = GraphEnvironment(graph)
    rng = np.random.default_rng(1)
    out: dict[str, float] = {}
    for name in ("first", "steady"):
        titles = [graph.text(graph.resolve(f"p{i}")) for i in rng.integers(0, int(graph.node_count * 0.7), queries)]
        times = []
        for title in titles:
            started = time.perf_counter()
            env.run_one(Action("RetrieveNode", (title,)))
            times.append(1000 * (time.perf_counter() - started))
        times.sort()
        prefix = "" if name == "steady" else "first_"
        out[f"{prefix}p50_ms"], out[f"{prefix}p95_ms"] = times[len(times) // 2], times[int(0.95 * (len(times) - 1))]
    return out


def _in_process(phase: str, *args: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--phase", phase, *args], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.splitlines()[-1])


def run(nodes: int, work: Path) -> dict[str, dict[str, float]]:
    work.mkdir(parents=True, exist_ok=True)
    source, target = work / f"g{nodes}.json", work / f"g{nodes}.kg"
    if not source.exists():
        subprocess.run([sys.executable, str(HERE / "grbench_synth.py"), "--nodes", str(nodes), "--out", str(source)],
                       check=True, capture_output=True)
    return {"import": _in_process("import", str(source), str(target)),
            "json_load": _in_process("json_load", str(source)),
            "retrieve": _in_process("retrieve", str(target))}


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--phase", choices=["all", "import", "json_load", "retrieve"], default="all")
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/thinkgraph-perf/kg"))
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    if args.phase == "import":
        print(json.dumps(phase_import(Path(args.paths[0]), Path(args.paths[1]))))
    elif args.phase == "json_load":
        print(json.dumps(phase_json_load(Path(args.paths[0]))))
    elif args.phase == "retrieve":
        print(json.dumps(phase_retrieve(Path(args.paths[0]))))
    else:
        print(json.dumps(run(args.nodes, args.work), indent=2))
