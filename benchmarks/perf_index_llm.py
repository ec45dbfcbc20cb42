"""LLM-bound indexing against a fake OpenAI-compatible server with a fixed latency.

The server (a separate process, asyncio, keep-alive HTTP/1.1) answers every chat call after
``latency`` seconds: extraction prompts with the capitalised names of the chunk as entities and
relations between neighbours, every other prompt with a short summary. `thinkgraph index -e llm`
runs as a cold CLI process with the real embedder. Beside it, in the same run:

- ideal: ``calls × latency / concurrency``;
- baseline: a plain httpx client replaying the same request bodies at the same concurrency.

Deterministic index: two runs over the same input compare equal in ``inspect --json`` apart from
timestamps and timings.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "si", "de", "an", "el", "or", "is", "um", "ber", "gan"]
_NAME = re.compile(r"\b[A-Z][a-z]{3,}\b")
VOLATILE = ("index", "size_bytes", "stage_timings", "llm_usage", "graph_version", "llm_structured_output")


def write_corpus(path: Path, passages: int, seed: int = 0) -> None:
    """Passages of four sentences, each naming two of ``2 × passages`` Zipf-distributed entities
    (about one community summary per three calls, as the issue's corpus had)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n_entities = max(50, 2 * passages)
    parts = rng.integers(0, len(_SYLLABLES), size=(n_entities, 3))
    names = ["".join(_SYLLABLES[p] for p in row).capitalize() + "x" for row in parts]
    weights = 1.0 / np.arange(1, n_entities + 1) ** 0.8
    weights /= weights.sum()
    with path.open("w", encoding="utf-8") as f:
        for i in range(passages):
            picks = rng.choice(n_entities, size=8, p=weights)
            sentences = [f"{names[picks[2 * k]]} worked with {names[picks[2 * k + 1]]} on project {i}-{k}."
                         for k in range(4)]
            f.write(json.dumps({"id": f"p{i}", "title": f"Passage {i}", "text": " ".join(sentences)}) + "\n")


def _reply(prompt: str) -> str:
    if "## Text" not in prompt:
        return "A short summary of the group and what its members did together."
    names = list(dict.fromkeys(_NAME.findall(prompt.split("## Text", 1)[1])))[:4]
    return json.dumps({"entities": [{"entity_name": n, "entity_type": "Person"} for n in names],
                       "relationships": [{"source_entity": a, "target_entity": b, "relation": "worked with"}
                                         for a, b in zip(names, names[1:], strict=False)]})


async def _serve(port_out: Any, latency: float, log_path: str) -> None:
    log = open(log_path, "w", encoding="utf-8")  # noqa: SIM115 - one file for the server's life

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))  # type: ignore[union-attr]
                body = await reader.readexactly(length)
                log.write(body.decode() + "\n")
                payload = json.loads(body)
                await asyncio.sleep(latency)
                reply = json.dumps({"choices": [{"message": {"role": "assistant",
                                                             "content": _reply(payload["messages"][-1]["content"])}}],
                                    "usage": {"prompt_tokens": 100, "completion_tokens": 30}}).encode()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                             + str(len(reply)).encode() + b"\r\n\r\n" + reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=256)
    port_out.put(server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()


def _server_main(port_out: Any, latency: float, log_path: str) -> None:
    asyncio.run(_serve(port_out, latency, log_path))


class FakeServer:
    def __init__(self, latency: float, log_path: Path) -> None:
        self.latency = latency
        self.log_path = log_path
        queue: Any = mp.Queue()
        self.proc = mp.Process(target=_server_main, args=(queue, latency, str(log_path)), daemon=True)
        self.proc.start()
        self.url = f"http://127.0.0.1:{queue.get(timeout=30)}/v1"

    def calls(self) -> list[str]:
        return [line for line in self.log_path.read_text(encoding="utf-8").splitlines() if line]

    def close(self) -> None:
        self.proc.terminate()
        self.proc.join()


async def replay(url: str, bodies: list[str], concurrency: int) -> float:
    """The plain client: the same request bodies, ``concurrency`` at a time."""
    import httpx

    limit = asyncio.Semaphore(concurrency)
    started = time.perf_counter()
    async with httpx.AsyncClient(timeout=60) as client:
        async def one(body: str) -> None:
            async with limit:
                (await client.post(f"{url}/chat/completions", content=body,
                                   headers={"content-type": "application/json"})).raise_for_status()
        await asyncio.gather(*(one(b) for b in bodies))
    return time.perf_counter() - started


@dataclass
class IndexRun:
    seconds: float
    calls: int
    bodies: list[str]
    inspect: dict[str, Any]


def index_once(work: Path, corpus: Path, name: str, latency: float, concurrency: int) -> IndexRun:
    server = FakeServer(latency, work / f"{name}.calls.jsonl")
    try:
        config = work / "thinkgraph.toml"
        config.write_text(f"[llm]\nconcurrency = {concurrency}\nmodel = \"m\"\n", encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_")}
        env |= {"THINKGRAPH_LLM_BASE_URL": server.url, "HF_HUB_OFFLINE": "1"}
        index = work / f"{name}.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{index}{suffix}").unlink(missing_ok=True)
        cli = [sys.executable, "-m", "thinkgraph", "-c", str(config), "-i", str(index)]
        started = time.perf_counter()
        subprocess.run([*cli, "index", str(corpus), "-e", "llm"], env=env, check=True, capture_output=True)
        seconds = time.perf_counter() - started
        inspect = json.loads(subprocess.run([*cli, "inspect", "--json"], env=env, check=True,
                                            capture_output=True, text=True).stdout)
        bodies = server.calls()
        return IndexRun(seconds, len(bodies), bodies, inspect)
    finally:
        server.close()


def baseline(work: Path, bodies: list[str], latency: float, concurrency: int) -> float:
    server = FakeServer(latency, work / "baseline.calls.jsonl")
    try:
        return asyncio.run(replay(server.url, bodies, concurrency))
    finally:
        server.close()


def comparable(inspect: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in inspect.items() if k not in VOLATILE}


def run(work: Path, passages: int, latency: float = 0.2, concurrency: int = 16,
        check_determinism: bool = True) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / f"corpus{passages}.jsonl"
    write_corpus(corpus, passages)
    first = index_once(work, corpus, f"llm{passages}a", latency, concurrency)
    plain = baseline(work, first.bodies, latency, concurrency)
    same = None
    if check_determinism:
        second = index_once(work, corpus, f"llm{passages}b", latency, concurrency)
        same = comparable(first.inspect) == comparable(second.inspect)
    return {"passages": passages, "seconds": first.seconds, "calls": first.calls,
            "ideal": first.calls * latency / concurrency, "baseline": plain, "deterministic": same,
            "timings": first.inspect.get("stage_timings", {}),
            "communities": first.inspect.get("communities_by_level", {})}


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--passages", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--work", type=Path, default=Path("/tmp/thinkgraph-perf"))
    args = parser.parse_args()
    print(json.dumps(run(args.work, args.passages, args.latency, args.concurrency), indent=2))
