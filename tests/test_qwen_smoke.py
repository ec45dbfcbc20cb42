"""The instruct model of the answer-quality benchmark behind a real server: Qwen2.5-Coder-1.5B-Instruct
(``qwen-1.5b``, assembled from its 22 registry parts) answers a sample question through `ppr` (one
answer call) and through an agentic method (A2RAG: gate, staged retrieval, drafts, Triple-Check), each
with a status, cited passages and the model named in the trace. Unlike Gemma 3 270M it follows the
answer format, so the test also checks what the reply says: the founder the passage names.

One decoding thread (the Gemma server of the other real-model tests may run beside it); a few minutes
on two cores. Skipped without the packages unless THINKGRAPH_REQUIRE_LLAMA is set (CI)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import realmodel
from support import SAMPLE_CORPUS
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings

pytestmark = pytest.mark.realmodel
QUESTION = "Who founded the Harbor Hill Observatory?"  # the sample corpus: Adela Morrow


@pytest.fixture(scope="module")
def qwen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[realmodel.RealModel]:
    missing = realmodel.missing_packages("qwen-1.5b")
    if missing:
        if os.environ.get(realmodel.REQUIRE_ENV):
            pytest.fail(f"{realmodel.REQUIRE_ENV} is set but {', '.join(missing)} cannot be imported")
        pytest.skip(f"the Qwen smoke test needs {', '.join(missing)} (pip install -e '.[dev]')")
    log = tmp_path_factory.mktemp("qwen") / "server.log"
    with realmodel.LlamaServer.of("qwen-1.5b", realmodel.test_cache(), log, n_threads=1) as model:
        yield model


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample corpus, indexed without an LLM (model-free entities; summaries are first sentences)."""
    path = tmp_path_factory.mktemp("qwen-index") / "sample.db"
    settings = Settings()
    settings.embedding.provider, settings.embedding.dim = "hashing", 256
    with ThinkGraph(path, settings=settings, create=True) as tg:
        assert tg.index([SAMPLE_CORPUS]).indexed == 4
    return path


def _ask(qwen: realmodel.RealModel, index: Path, method: str) -> tuple[str, str | None, list[str], str]:
    settings = Settings()
    settings.embedding.provider, settings.embedding.dim = "hashing", 256
    settings.llm.base_url, settings.llm.model, settings.llm.concurrency = qwen.base_url, qwen.model, 1
    settings.llm.timeout_s = 600.0
    with ThinkGraph(index, settings=settings) as tg:
        answer = tg.ask(QUESTION, method)
    model = next(s.outputs["model"] for s in answer.trace if s.agent == "llm")
    return str(answer.status), answer.text, [c.doc_id for c in answer.citations], model


@pytest.mark.parametrize("method", ["ppr", "a2rag"])
def test_qwen_answers_a_sample_question_with_a_status_and_citations(qwen: realmodel.RealModel, index: Path,
                                                                    method: str) -> None:
    status, text, cited, model = _ask(qwen, index, method)
    assert model == "qwen2.5-coder-1.5b-instruct"
    assert status in {"answered", "abstained", "failed", "truncated"}
    if method == "ppr":  # one answer call over passages that hold the answer: the model states it and cites
        assert status == "answered", (status, text)
        assert "Morrow" in (text or "") and "harbor-observatory.md" in cited, (text, cited)
