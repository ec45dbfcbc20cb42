"""Asking a method on an index that lacks what it reads says so in one line: what the method runs
without, and the command that builds it (or that the paper builds it on the fly)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support import FIXTURES, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.methods import catalog
from thinkgraph.methods.needs import index_lacks

TOG3_LINE = "tog3 finds no triplet nodes here: this index has none"
A2RAG_LINE = "a2rag walks co-occurrence links here, not relations: this index has no triplets"


@pytest.fixture(scope="module")
def nolm_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The model-free default: entities and co-occurrence, no triplets."""
    path = tmp_path_factory.mktemp("needs") / "nolm.db"
    settings = Settings()
    settings.index.communities = "always"
    with ThinkGraph(path, settings=settings, embedder=HashEmbedder()) as tg:
        tg.index([FIXTURES / "corpus_small.jsonl"])
    return path


def _open(path: Path) -> ThinkGraph:
    return ThinkGraph.open(path, settings=Settings(), embedder=HashEmbedder())


@pytest.mark.parametrize("method, line", [("tog3", TOG3_LINE), ("a2rag", A2RAG_LINE)])
async def test_a_method_reading_triplets_says_what_it_runs_without(nolm_index: Path, method: str, line: str) -> None:
    with _open(nolm_index) as tg:
        answer = await tg.aretrieve("Who trained Lena Sorensen?", method, gate=False) if method == "a2rag" else \
            await tg.aretrieve("Who trained Lena Sorensen?", method)
    (said,) = answer.stats["index_lacks"]
    assert said.startswith(line) and "--extractor llm" in said and line in (answer.message or "")
    assert answer.citations  # it runs without them
    if method == "tog3":
        assert "with an LLM its Constructor extracts triplets on the fly" in said  # per question, with a model


async def test_an_index_with_triplets_has_nothing_to_say(open_bridge) -> None:  # noqa: ANN001
    tg = open_bridge()
    answer = await tg.aretrieve("Where is the company that Alice Stone founded based?", "a2rag", gate=False)
    assert "index_lacks" not in answer.stats and "no triplets" not in (answer.message or "")


async def test_a_part_switched_off_is_not_asked_for(nolm_index: Path) -> None:
    tog3 = catalog.get("tog3")
    config = tog3.make_config(Settings(), {"use_communities": False})
    with _open(nolm_index) as tg:
        lacks = index_lacks("tog3", tog3.needs(config), tg.view)
    assert len(lacks) == 1 and lacks[0].startswith(TOG3_LINE)


def test_the_command_line_prints_the_line(tmp_path: Path) -> None:
    config = tmp_path / "thinkgraph.toml"
    config.write_text('[embedding]\nprovider = "hashing"\n', encoding="utf-8")
    base = [sys.executable, "-m", "thinkgraph", "-i", str(tmp_path / "i.db"), "-c", str(config)]
    built = subprocess.run([*base, "index", str(FIXTURES / "corpus_small.jsonl")], capture_output=True, text=True,
                           timeout=300)
    assert built.returncode == 0, built.stderr
    done = subprocess.run([*base, "ask", "Who trained Lena Sorensen?", "-m", "tog3"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert TOG3_LINE in " ".join(done.stdout.split())
