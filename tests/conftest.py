from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from support import FakeOpenAIServer, HashEmbedder  # noqa: E402
from thinkgraph.config import Settings  # noqa: E402


@pytest.fixture
def fake_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def settings() -> Settings:
    s = Settings()
    s.llm.backoff_s = 0.01
    s.llm.timeout_s = 5.0
    return s


@pytest.fixture
def index_path(tmp_path: Path) -> Path:
    return tmp_path / "index.db"


@pytest.fixture
def open_bridge(tmp_path: Path) -> Iterator:
    """A factory opening one small OpenIE-built index (tests/fixtures/bridge_*) with a given scripted
    backend (or none); every index it opens is closed at the end of the test."""
    from support import FIXTURES
    from thinkgraph.api import ThinkGraph

    path = tmp_path / "bridge.db"
    with ThinkGraph(path, settings=Settings(), embedder=HashEmbedder()) as built:
        built.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
    opened: list[ThinkGraph] = []

    def make(backend: object | None = None) -> ThinkGraph:
        tg = ThinkGraph.open(path, settings=Settings(), embedder=HashEmbedder(), backend=backend)
        opened.append(tg)
        return tg

    yield make
    for tg in opened:
        tg.close()
