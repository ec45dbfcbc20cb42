from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

import pg_support  # noqa: E402
from support import FakeOpenAIServer, HashEmbedder, index_opener  # noqa: E402
from thinkgraph.config import Settings  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _own_cache_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests keep the retrieval view caches they make in a folder of their own, not the user's; the
    exported ONNX model stays shared with the user's cache (exporting it costs seconds)."""
    from thinkgraph.cachedir import cache_root

    onnx = cache_root("onnx")
    onnx.mkdir(parents=True, exist_ok=True)
    root = tmp_path_factory.mktemp("thinkgraph-cache")
    (root / "onnx").symlink_to(onnx, target_is_directory=True)
    before = os.environ.get("THINKGRAPH_CACHE_DIR")
    os.environ["THINKGRAPH_CACHE_DIR"] = str(root)
    yield
    if before is None:
        os.environ.pop("THINKGRAPH_CACHE_DIR", None)
    else:
        os.environ["THINKGRAPH_CACHE_DIR"] = before


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
    """One small OpenIE-built index (tests/fixtures/bridge_*), opened with a given backend."""
    from support import FIXTURES

    yield from index_opener(tmp_path / "bridge.db", lambda tg: tg.index(
        [FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl"))


@pytest.fixture
def kg(tmp_path: Path) -> Iterator:
    """The GRBench-shaped fixture graph (tests/fixtures/grbench_small.json), opened with a given backend."""
    from support import FIXTURES

    yield from index_opener(tmp_path / "kg.db", lambda tg: tg.import_kg(FIXTURES / "grbench_small.json"))


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL (no schema) of a PostgreSQL server with pgvector, started once per test session."""
    url, server = pg_support.start_server()
    yield url
    pg_support.stop_server(server)


@pytest.fixture
def pg_url(postgres_server: str) -> Iterator:
    """``pg_url()`` gives the URL of a fresh schema (an empty index), dropped after the test."""
    yield from pg_support.schema_urls(postgres_server)


@pytest.fixture(scope="session")
def real_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """llama-cpp-python's server with Gemma 3 270M for the whole session (see tests/realmodel.py)."""
    import realmodel

    missing = realmodel.missing_packages()
    if missing:
        if os.environ.get(realmodel.REQUIRE_ENV):
            pytest.fail(f"{realmodel.REQUIRE_ENV} is set but {', '.join(missing)} cannot be imported")
        pytest.skip(f"real-model tests need {', '.join(missing)} (pip install -e '.[dev]')")
    cache = Path(os.environ.get("THINKGRAPH_TEST_MODEL_CACHE", Path.home() / ".cache" / "thinkgraph-tests"))
    cache.mkdir(parents=True, exist_ok=True)
    gguf = realmodel.model_file(cache)
    with realmodel.LlamaServer(gguf, tmp_path_factory.mktemp("llama") / "server.log") as model:
        yield model
