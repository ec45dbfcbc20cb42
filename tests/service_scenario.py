"""`thinkgraph serve` processes over one store — two servers (standing for two machines) over one
PostgreSQL database, or one server with several workers over SQLite workspaces — and clients that
upload, delete and ask across workspaces at once. Used by the scenario tests and by
benchmarks/service_postgres.py and benchmarks/robustness.py (50 clients for a minute).

Each client owns its document ids (``{workspace}-c{client}-{n}``), so the last acknowledged write of
every id is known: afterwards each id acknowledged as uploaded and not deleted must be in its
workspace exactly once, every other id absent, and no answer may cite a document of another
workspace."""

from __future__ import annotations

import contextlib
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from thinkgraph.store import open_store
from thinkgraph.store.base import GraphStore
from thinkgraph.store.pg_location import parse_location

ASK_METHODS = ("naive", "ppr", "a2rag")  # a2rag reads entities and their vectors while uploads write them
TOPICS = ("rowing", "telescopes", "orchards", "glaciers", "printing", "lighthouses", "violins", "bridges")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def servers(store_url: str | None, config: Path, count: int = 2, *, root: Path | None = None,
            workers: int = 1) -> Iterator[list[str]]:
    """``count`` serve processes on their own ports over one store (``--store URL``, or workspaces
    under ``root``), each with ``workers`` worker processes; yields their base URLs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_")} | {"HF_HUB_OFFLINE": "1"}
    where = ["--store", store_url] if store_url else ["--root", str(root)]
    procs, urls = [], []
    try:
        for _ in range(count):
            port = free_port()
            procs.append(subprocess.Popen([sys.executable, "-m", "thinkgraph", "-c", str(config), "serve", *where,
                                           "--port", str(port), "--workers", str(workers)], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
            urls.append(f"http://127.0.0.1:{port}")
        for proc, url in zip(procs, urls, strict=True):
            _wait_healthy(proc, url)
        yield urls
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)


def _wait_healthy(proc: subprocess.Popen, url: str) -> None:
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stdout.read() if proc.stdout else ''}")
        try:
            if httpx.get(f"{url}/v1/health", timeout=1).is_success:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(f"server at {url} did not start")


MINIMUM_WAIT_FACTOR = 20  # run_clients: how much longer than asked the clients may run to reach a minimum


@dataclass
class Tally:
    """What the clients saw: the documents acknowledged as present per workspace, latencies, and
    anything wrong (errors, answers citing another workspace)."""

    live: dict[str, set[str]] = field(default_factory=dict)
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"upload": [], "delete": [], "ask": []})
    problems: list[str] = field(default_factory=list)
    server_errors: int = 0  # replies with a 5xx status
    foreign_citations: int = 0  # answers citing a document of another workspace
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, kind: str, seconds: float) -> None:
        with self.lock:
            self.latencies[kind].append(seconds)

    def problem(self, text: str) -> None:
        with self.lock:
            self.problems.append(text)

    def reached(self, minimum: dict[str, int]) -> bool:
        """Whether each kind of request has been made at least ``minimum[kind]`` times."""
        with self.lock:
            return all(len(self.latencies[kind]) >= n for kind, n in minimum.items())

    def summary(self) -> dict[str, dict[str, float]]:
        out = {}
        for kind, values in self.latencies.items():
            ordered = sorted(values) or [0.0]
            out[kind] = {"count": len(values), "p50_ms": 1000 * statistics.median(ordered),
                         "p95_ms": 1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]}
        return out


def _client(number: int, workspaces: list[str], urls: list[str], until: float, tally: Tally,
            minimum: dict[str, int], hard_stop: float) -> None:
    rng = random.Random(number)
    ws = workspaces[number % len(workspaces)]
    mine: list[str] = []
    made = 0
    with httpx.Client(timeout=120) as http:
        while time.time() < until or (not tally.reached(minimum) and time.time() < hard_stop):
            base = rng.choice(urls)
            roll = rng.random()
            started = time.perf_counter()
            if roll < 0.45 or not mine:
                doc_id = f"{ws}-c{number}-{made}"
                made += 1
                topic = rng.choice(TOPICS)
                text = (f"{doc_id} is a note about {topic} kept by client {number} of workspace {ws}. "
                        f"The {topic} guild of {ws} met {made} times in the hall of client {number}.")
                reply = http.put(f"{base}/v1/workspaces/{ws}/documents/{doc_id}", json={"text": text})
                kind = "upload"
                if reply.is_success:
                    mine.append(doc_id)
            elif roll < 0.60:
                doc_id = mine.pop(rng.randrange(len(mine)))
                reply = http.delete(f"{base}/v1/workspaces/{ws}/documents/{doc_id}")
                kind = "delete"
            else:
                reply = http.post(f"{base}/v1/workspaces/{ws}/ask", json={
                    "question": f"What did the {rng.choice(TOPICS)} guild of {ws} do?",
                    "method": rng.choice(ASK_METHODS)})
                kind = "ask"
                if reply.is_success:
                    foreign = [c["doc_id"] for c in reply.json()["citations"] if not c["doc_id"].startswith(f"{ws}-")]
                    if foreign:
                        tally.problem(f"an answer in {ws} cites {foreign}")
                        with tally.lock:
                            tally.foreign_citations += 1
            if reply.status_code >= 500:
                with tally.lock:
                    tally.server_errors += 1
            if not reply.is_success:
                tally.problem(f"{kind} in {ws} failed: {reply.status_code} {reply.text[:200]}")
            tally.note(kind, time.perf_counter() - started)
    with tally.lock:
        tally.live.setdefault(ws, set()).update(mine)


def run_clients(urls: list[str], workspaces: list[str], clients: int, seconds: float,
                minimum: dict[str, int] | None = None) -> Tally:
    """Clients for ``seconds``, and on past them until each kind of request in ``minimum`` was made that
    often (a loaded machine serves fewer in the time; a test counts requests, not throughput), at most
    MINIMUM_WAIT_FACTOR times as long."""
    for ws in workspaces:
        httpx.post(f"{urls[0]}/v1/workspaces/{ws}", timeout=60).raise_for_status()
    tally = Tally(live={ws: set() for ws in workspaces})
    until = time.time() + seconds
    hard_stop = time.time() + seconds * MINIMUM_WAIT_FACTOR
    threads = [threading.Thread(target=_client, args=(n, workspaces, urls, until, tally, minimum or {}, hard_stop))
               for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return tally


def check_final(location_of: Callable[[str], str], urls: list[str], tally: Tally) -> list[str]:
    """Problems with the end state: every acknowledged upload not deleted present exactly once
    (document record, document node, passages with their provenance), nothing else.
    ``location_of(workspace)`` is where that workspace's index is."""
    problems = list(tally.problems)
    for ws, expected in tally.live.items():
        for base in urls:  # every server sees the same documents
            listed = [d["id"] for d in httpx.get(f"{base}/v1/workspaces/{ws}/documents", timeout=60).json()]
            if sorted(listed) != sorted(expected):
                problems.append(f"{base} lists {len(listed)} documents in {ws}, {len(expected)} were acknowledged: "
                                f"missing {sorted(set(expected) - set(listed))[:5]}, extra "
                                f"{sorted(set(listed) - set(expected))[:5]}")
        store = open_store(location_of(ws), create=False)
        try:
            problems += _store_problems(store, ws, expected)
        finally:
            store.close()
    return problems


def postgres_workspace(store_url: str) -> Callable[[str], str]:
    target = parse_location(store_url)
    return lambda ws: target.with_schema(f"ws_{ws}").url


def _store_problems(store: GraphStore, ws: str, expected: set[str]) -> list[str]:
    problems = []
    documents = store.list_documents()
    if any(str(d.status) != "done" for d in documents):
        problems.append(f"{ws}: documents not done: {[d.id for d in documents if str(d.status) != 'done'][:5]}")
    doc_nodes = [n.props.get("doc_id") for n in store.iter_nodes("document")]
    if sorted(doc_nodes) != sorted(expected):
        problems.append(f"{ws}: {len(doc_nodes)} document nodes for {len(expected)} documents")
    chunk_docs = {n.props.get("doc_id") for n in store.iter_nodes("chunk")}
    if chunk_docs != expected:
        problems.append(f"{ws}: passages of {sorted(chunk_docs ^ expected)[:5]} wrong")
    return problems
