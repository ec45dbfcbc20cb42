"""Two `thinkgraph serve` processes on different ports (standing for two machines) over one
PostgreSQL database, with 50 concurrent clients mixing uploads, deletes and asks across workspaces
for a minute (issue #21). Prints throughput and latency per operation, then checks the end state:
every acknowledged write present exactly once, nothing deleted left over, no answer citing another
workspace's documents.

    .venv/bin/python benchmarks/service_postgres.py [--postgres URL] [--clients 50] [--seconds 60]

Without --postgres an embedded PostgreSQL 16 + pgvector (the `pgserver` package) is started. The
embedder is the model-free hashing one and documents are indexed with the model-free extractor, so
that the numbers are the service's and the store's, not a model's.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the scenario driver and the embedded PostgreSQL of the tests

from pg_support import start_server, stop_server, with_schema  # noqa: E402
from service_scenario import check_final, postgres_workspace, run_clients, servers  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres", default=None, help="PostgreSQL URL (default: an embedded server).")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workspaces", type=int, default=5)
    args = parser.parse_args()
    server_url, server = (args.postgres, None) if args.postgres else start_server()
    try:
        problems = scenario(args, server_url)
    finally:
        stop_server(server)
    sys.exit(1 if problems else 0)


def scenario(args: argparse.Namespace, server_url: str) -> list[str]:
    folder = Path(tempfile.mkdtemp(prefix="tg-svc-"))
    config = folder / "tg.toml"
    config.write_text('[embedding]\nprovider = "hashing"\ndim = 384\n[index]\nextractor = "nolm"\n', "utf-8")
    store_url = with_schema(server_url, "unused")  # the service gives each workspace its own schema
    names = [f"bench{int(time.time())}x{i}" for i in range(args.workspaces)]
    print(f"{args.clients} clients, {args.seconds:.0f} s, {len(names)} workspaces, 2 serve processes over one "
          "PostgreSQL; machine shared, 2 cores", flush=True)
    with servers(store_url, config) as urls:
        started = time.perf_counter()
        tally = run_clients(urls, names, args.clients, args.seconds)
        elapsed = time.perf_counter() - started
        problems = check_final(postgres_workspace(store_url), urls, tally)
    print("operation | count | per s | p50 ms | p95 ms")
    for kind, row in tally.summary().items():
        print(f"{kind} | {row['count']} | {row['count'] / elapsed:.1f} | {row['p50_ms']:.0f} | {row['p95_ms']:.0f}")
    live = sum(len(v) for v in tally.live.values())
    print(f"documents acknowledged and not deleted: {live}; problems: {len(problems)}")
    for line in problems[:20]:
        print(f"  {line}")
    return problems


if __name__ == "__main__":
    main()
