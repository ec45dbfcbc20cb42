"""Test helpers: a deterministic hashing embedder (fast, no model) and a local HTTP server that
speaks the OpenAI-compatible chat and embeddings API with scripted behaviours."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from thinkgraph.config import LLMSettings
from thinkgraph.embed.hashing import HashingEmbedder
from thinkgraph.llm.service import LLM
from thinkgraph.testing import ScriptedBackend

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_CORPUS = ROOT / "examples" / "sample_corpus"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


class HashEmbedder(HashingEmbedder):
    """The product's hashing embedder at a small dimension, counting its calls. A test double."""

    def __init__(self, dim: int = 128, name: str = "test:hash") -> None:
        super().__init__(dim, name)
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        return super().embed(texts)


@dataclass
class Behaviour:
    status: int = 200
    content: str | None = "ok"
    body: str | None = None  # raw body overrides content
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


class FakeOpenAIServer:
    """Chat replies come from ``behaviours`` in order (the default reply when empty)."""

    def __init__(self) -> None:
        self.behaviours: deque[Behaviour] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.default = Behaviour(content="default reply")
        # computes replies when set: the reply text, or a whole Behaviour (e.g. a refusal)
        self.responder: Callable[[dict[str, Any]], str | Behaviour] | None = None
        self.streams = True  # answer "stream": true with server-sent events
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length", 0))
                payload = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.requests.append({"path": self.path, **payload})
                    server.headers.append(dict(self.headers))
                    behaviour = server.behaviours.popleft() if server.behaviours else server.default
                    if server.responder is not None and not self.path.endswith("/embeddings"):
                        produced = server.responder(payload)
                        behaviour = produced if isinstance(produced, Behaviour) else \
                            Behaviour(content=produced, delay_s=behaviour.delay_s)
                if self.path.endswith("/embeddings"):
                    self._embeddings(payload)
                    return
                if behaviour.delay_s:
                    time.sleep(behaviour.delay_s)
                body = behaviour.body
                if body is None and behaviour.status == 200 and payload.get("stream") and server.streams:
                    self._stream(behaviour.content or "")
                    return
                if body is None:
                    body = json.dumps({"choices": [{"message": {"role": "assistant", "content": behaviour.content}}],
                                       "usage": {"prompt_tokens": 11, "completion_tokens": 3}})
                try:
                    self.send_response(behaviour.status)
                    for k, v in behaviour.headers.items():
                        self.send_header(k, v)
                    self.send_header("content-type", "application/json")
                    self.end_headers()
                    self.wfile.write(body.encode())
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _stream(self, content: str) -> None:
                """Server-sent events as OpenAI-compatible servers send them: a role delta, one delta
                per word, a finish event and [DONE]."""
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                pieces = [{"role": "assistant"}] + [{"content": w} for w in re.split(r"(?<= )", content) if w]
                for delta in pieces:
                    event = {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())

            def _embeddings(self, payload: dict[str, Any]) -> None:
                texts = payload["input"]
                vecs = HashEmbedder(16).embed(texts)
                body = json.dumps({"data": [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)]})
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.end_headers()
                self.wfile.write(body.encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def push(self, *behaviours: Behaviour) -> None:
        self.behaviours.extend(behaviours)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]


def load_benchmark(name: str) -> ModuleType:
    """A script of benchmarks/ imported as a module (registered under ``name``, loaded once)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def make_pdf(pages: list[str]) -> bytes:
    """A minimal PDF with one text line per page (an empty string makes a page with no text layer)."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", ""]
    kids = []
    for text in pages:
        content = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode() if text else b""
        stream_id = len(objects) + 2
        objects.append(f"<< /Length {len(content)} >>\nstream\n{content.decode()}\nendstream")
        kids.append(len(objects) + 1)
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {stream_id - 1} 0 R "
                       "/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} >>"
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def index_opener(path: Path, build: Callable[[object], object]) -> Iterator:
    """Build an index at ``path`` once (``build(tg)``), then yield a factory opening it with a given
    scripted backend (or none); every index it opened is closed at the end of the test."""
    from thinkgraph.api import ThinkGraph
    from thinkgraph.config import Settings

    settings = Settings()
    settings.index.communities = "always"  # every method (tog3 too) can run on the fixture indexes
    with ThinkGraph(path, settings=settings, embedder=HashEmbedder()) as built:
        build(built)
    opened: list[ThinkGraph] = []

    def make(backend: object | None = None) -> ThinkGraph:
        tg = ThinkGraph.open(path, settings=Settings(), embedder=HashEmbedder(), backend=backend)
        opened.append(tg)
        return tg

    yield make
    for tg in opened:
        tg.close()


# A small multi-hop corpus. a: the first hop (the question's entity and the bridge); b: the second hop,
# reached through the bridge "Ember Fleet"; c: a look-alike of the first hop (same entity, also
# "sailed"); d: another passage of the bridge; e: unrelated; f: no entity at all.
CHAIN_DOCS = {
    "a.txt": "Zorvath Quell commanded the Ember Fleet.",
    "b.txt": "The Ember Fleet sailed from Harrowgate harbour in 1702.",
    "c.txt": "Zorvath Quell was born in Dunmere and sailed as a boy.",
    "d.txt": "The Ember Fleet was painted red.",
    "e.txt": "Orla Venn painted lighthouses near Dunmere.",
    "f.txt": "plain lowercase words without a name.",
}
CHAIN_QUESTION = "Where did the fleet of Zorvath Quell sail from?"


def scripted_llm(*replies: str) -> tuple[LLM, ScriptedBackend]:
    """An LLM client whose server replies with ``replies`` in turn (one call at a time), and its backend."""
    backend = ScriptedBackend.of(list(replies))
    return LLM(backend, settings=LLMSettings(base_url="http://scripted", concurrency=1)), backend
