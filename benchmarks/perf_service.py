"""`thinkgraph serve` retrieval throughput: 16 concurrent clients asking ``/retrieve`` (no LLM) of
one workspace, with 1 and 2 worker processes, beside the single-client latency of the same server.
Every question is distinct (a numbered suffix), so no query cache answers for the server."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class ServiceFigures:
    workers: int
    single_p50: float
    throughput: float  # requests per second with ``clients`` clients
    p95: float
    client_cores: float  # cores the load generator itself used meanwhile (it shares the machine)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _post(host: str, port: int, path: str, body: bytes) -> None:
    """One POST on a new connection, the reply read to its end. A plain asyncio client: with httpx's
    client the two-worker runs gave 60 and 92 requests/s, with this one 99 and 98 (same server);
    a connection per request lets the kernel spread requests over the workers as they come."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(b"POST " + path.encode() + b" HTTP/1.1\r\nhost: " + host.encode()
                     + b"\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: "
                     + str(len(body)).encode() + b"\r\n\r\n" + body)
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        await reader.read()  # connection: close ends the body
        if status != 200:
            raise RuntimeError(f"HTTP {status} from the service")
    finally:
        writer.close()


async def _load(url: str, questions: list[str], clients: int, requests: int) -> tuple[float, list[float]]:
    host, port, path = _split(url)
    latencies: list[float] = []
    queue: asyncio.Queue[str] = asyncio.Queue()
    for i in range(requests):
        queue.put_nowait(f"{questions[i % len(questions)]} #{i}")

    async def client() -> None:
        while not queue.empty():
            body = json.dumps({"question": queue.get_nowait(), "method": "ppr", "top_k": 5}).encode()
            started = time.perf_counter()
            await _post(host, port, path, body)
            latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return time.perf_counter() - started, latencies


def _split(url: str) -> tuple[str, int, str]:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 80, parts.path


def measure(index: Path, questions: list[str], workers: int, work: Path, clients: int = 16,
            requests: int = 160) -> ServiceFigures:
    root = work / f"service{workers}"
    shutil.rmtree(root, ignore_errors=True)
    (root / "bench").mkdir(parents=True)
    shutil.copy(index, root / "bench" / "index.db")
    port = _free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen([sys.executable, "-m", "thinkgraph", "serve", "--root", str(root), "--port", str(port),
                               "--workers", str(workers)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    url = f"{base}/workspaces/bench/retrieve"
    try:
        import httpx

        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.3)
        asyncio.run(_load(url, questions, clients, 4 * clients))  # every worker loads its index view
        _, single = asyncio.run(_load(url, questions, 1, 20))
        cpu = time.process_time()
        seconds, many = asyncio.run(_load(url, questions, clients, requests))
        client_cores = (time.process_time() - cpu) / seconds
    finally:
        server.terminate()
        server.wait(timeout=60)
    return ServiceFigures(workers, statistics.median(single), requests / seconds,
                          statistics.quantiles(many, n=20)[-1], client_cores)


def questions_from(path: Path) -> list[str]:
    return [json.loads(line)["question"] for line in path.open(encoding="utf-8") if line.strip()]


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/thinkgraph-perf"))
    args = parser.parse_args()
    qs = questions_from(args.questions)
    for n in (1, 2):
        print(measure(args.index, qs, n, args.work))
