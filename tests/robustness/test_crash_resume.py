"""kill -9 at random moments of `thinkgraph index` (model-free, import and LLM extractors), then the same
command again: the index equals an uninterrupted run's, node for node, edge for edge, vector for
vector — nothing lost, nothing duplicated. THINKGRAPH_ROBUSTNESS_LONG=1 runs twenty kills each."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from crash import EXTRACTION_REPLY, synthetic_corpus, trials

from support import Behaviour, FakeOpenAIServer

LONG = bool(os.environ.get("THINKGRAPH_ROBUSTNESS_LONG"))
KILLS = 20 if LONG else 2
DOCUMENTS = 120  # long enough a run that kills land in extraction and in the derived stages
CONFIG = '[embedding]\nprovider = "hashing"\ndim = 64\n[index]\nbatch_docs = 2\n'


@pytest.mark.parametrize("extractor", ["nolm", "import", "llm"])
def test_killed_index_resumes_to_the_same_index(tmp_path: Path, extractor: str, figures: Callable[..., None]) -> None:
    config = tmp_path / "tg.toml"
    config.write_text(CONFIG + ('[llm]\nconcurrency = 2\n' if extractor == "llm" else ""), encoding="utf-8")
    corpus, openie = synthetic_corpus(tmp_path / "corpus", DOCUMENTS)
    extra = ["--openie", str(openie)] if extractor == "import" else []
    with FakeOpenAIServer() as server:
        server.default = Behaviour(content=EXTRACTION_REPLY, delay_s=0.02)  # every call takes a moment
        results = trials(tmp_path / "work", config, corpus, extractor, KILLS, extra=extra,
                         llm_url=server.url if extractor == "llm" else None, seed=len(extractor))
    figures(f"kill -9 during `index -e {extractor}`, then resume", runs=len(results),
            lost=sum(t.lost + t.documents_differ for t in results),
            duplicated=sum(t.duplicated + t.extra for t in results),
            wrong_exits=sum(t.resumed_exit != 0 for t in results))
    bad = [t for t in results if not t.ok]
    assert not bad, bad
