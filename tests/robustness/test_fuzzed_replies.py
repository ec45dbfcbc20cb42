"""Whatever a model sends, nothing crashes: every structured call either validates or fails with a
counted StructuredOutputError, every method ends with a status, and an indexing run records a bad reply
as a failed chunk (never as done). Memory and time stay bounded.

The fast part runs in CI; THINKGRAPH_ROBUSTNESS_LONG=1 runs 10,000 replies over all structured calls and
sixty garbage-fed questions per method."""

from __future__ import annotations

import ast
import importlib
import itertools
import os
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from replies import KINDS, messy_replies

from support import FIXTURES, HashEmbedder, index_opener
from thinkgraph.api import ThinkGraph
from thinkgraph.config import LLMSettings, Settings
from thinkgraph.errors import BudgetExceededError, StructuredOutputError
from thinkgraph.index.pipeline import EXTRACT_STAGE
from thinkgraph.llm.backend import ChatRequest
from thinkgraph.llm.service import LLM
from thinkgraph.testing import ScriptedBackend

LONG = bool(os.environ.get("THINKGRAPH_ROBUSTNESS_LONG"))
SRC = Path(__file__).resolve().parents[2] / "src" / "thinkgraph"
STATUSES = {"answered", "abstained", "failed", "evidence_only", "truncated"}  # truncated: cut at the cap, said so


def reply_schemas() -> dict[str, type[BaseModel]]:
    """Every schema passed to ``LLM.json`` or ``LLM.judge`` anywhere in the package, found in the source
    (so that a new structured call is fuzzed without anyone adding it here)."""
    found: dict[str, type[BaseModel]] = {}
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = "thinkgraph." + ".".join(path.relative_to(SRC).with_suffix("").parts)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("json", "judge") and len(node.args) >= 2):
                arg = node.args[1]
                if isinstance(arg, ast.Name):
                    found[f"{module}.{arg.id}"] = getattr(importlib.import_module(module), arg.id)
                elif isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name):  # a schema per bound
                    factory = getattr(importlib.import_module(module), arg.func.id)
                    found[f"{module}.{arg.func.id}(2)"] = factory(2)
    return found


def test_the_source_has_structured_calls_to_fuzz() -> None:
    names = set(reply_schemas())
    assert "thinkgraph.index.extract_llm.extraction_reply_schema(2)" in names
    assert "thinkgraph.methods.a2rag.verify.TripleVerdict" in names and len(names) >= 15
    assert "thinkgraph.methods.tog3.loop.YesNoVerdict" in names  # the verdicts asked with their P(yes)


def _cycling(replies: list[str]) -> ScriptedBackend:
    feed = itertools.cycle(replies)
    return ScriptedBackend(rules=[("", lambda request: next(feed))])


# 10,000 replies in all over every structured call in the long form; in CI, each kind once and then some
REPLIES = -(-10_000 // len(reply_schemas())) if LONG else len(KINDS) + 4


@pytest.mark.parametrize("schema_name", sorted(reply_schemas()))
async def test_every_structured_call_validates_or_fails_cleanly(schema_name: str, figures: Callable[..., None]) -> None:
    schema = reply_schemas()[schema_name]
    replies = [reply for _, reply in messy_replies(seed=sum(map(ord, schema_name)), count=REPLIES)]
    llm = LLM(_cycling(replies), settings=LLMSettings(model="m", max_repairs=0))
    started = time.perf_counter()
    ok = failed = 0
    slowest = 0.0
    crashes: list[str] = []
    tracemalloc.start()
    try:
        for i in range(len(replies)):
            one = time.perf_counter()
            try:
                value = await llm.json([{"role": "user", "content": f"q{i}"}], schema, step="fuzz")
            except StructuredOutputError:
                failed += 1
                continue
            except Exception as error:  # noqa: BLE001 - counted: the figure this test exists to keep at 0
                crashes.append(f"{type(error).__name__}: {error}"[:200])
                continue
            finally:
                slowest = max(slowest, time.perf_counter() - one)
            ok += 1 if isinstance(value, schema) else 0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    seconds = time.perf_counter() - started
    figures("fuzzed replies to every structured call (schema)", runs=len(replies), tracebacks=len(crashes),
            uncounted_failures=len(replies) - ok - failed - len(crashes) + abs(llm.meter.parse_failures - failed),
            peak_mb=round(peak / 1e6, 1), seconds=round(seconds, 1))
    assert not crashes, crashes[:5]
    assert ok + failed == len(replies) and llm.meter.parse_failures == failed
    # bounded time per reply, whatever its size or shape (a generous bound: tracemalloc slows every
    # allocation, and the machine may be busy; a parser gone quadratic on a huge reply takes minutes)
    assert slowest < 10.0, f"one reply took {slowest:.1f} s"


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    path = tmp_path_factory.mktemp("fuzz") / "bridge.db"
    yield from index_opener(path, lambda tg: tg.index([FIXTURES / "bridge_corpus.jsonl"],
                                                      openie=FIXTURES / "bridge_openie.jsonl"))


METHODS: list[tuple[str, dict[str, Any]]] = [
    ("none", {}), ("naive", {}), ("ppr", {}), ("ircot", {}), ("a2rag", {"i_max": 1}),
    ("topg", {"mode": "naive"}), ("topg", {"mode": "local", "max_iter": 2}),
    ("topg", {"mode": "local", "max_iter": 2, "select_form": "reasoned"}),
    ("topg", {"mode": "global", "breadth": 2, "global_max_iter": 1, "min_facts": 10}),
    ("tog3", {"horizon": 2}),
    ("kgr", {"strategy": "cot", "interaction": "agent", "steps": 4}),
    ("kgr", {"strategy": "cot", "interaction": "explore", "steps": 2, "search_depth": 1}),
    ("kgr", {"strategy": "tot", "interaction": "agent", "steps": 2, "k": 2, "t": 2}),
    ("kgr", {"strategy": "got", "interaction": "explore", "steps": 2, "k": 2, "t": 2, "search_depth": 1}),
    ("kg-textrag", {}), ("kg-graphrag", {}),
]
RUNS_PER_METHOD = 60 if LONG else 2


@pytest.mark.parametrize(("method", "options"), METHODS, ids=[f"{m}-{i}" for i, (m, _) in enumerate(METHODS)])
def test_every_method_ends_with_a_status_whatever_the_model_sends(bridge: Any, method: str,
                                                                   options: dict[str, Any],
                                                                   figures: Callable[..., None]) -> None:
    crashes: list[str] = []
    wrong: list[str] = []
    started = time.perf_counter()
    tracemalloc.start()
    try:
        for run in range(RUNS_PER_METHOD):
            replies = [reply for _, reply in messy_replies(seed=1000 * run + len(method), count=len(KINDS))]
            tg = bridge(_cycling(replies))
            tg.settings.llm.budget_calls = 400  # a garbage-fed search must still stop
            try:
                answer = tg.ask("In which valley is the town where Acme Corp is based?", method, **options)
            except BudgetExceededError:
                continue  # the run stopped cleanly at its budget: a status the CLI reports
            except Exception as error:  # noqa: BLE001 - counted: the figure this test exists to keep at 0
                crashes.append(f"{type(error).__name__}: {error}"[:200])
                continue
            if answer.status not in STATUSES or (answer.status in ("failed", "truncated") and not answer.message):
                wrong.append(f"{answer.status}: {answer.message!r}")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    figures(f"fuzzed replies to {method}", runs=RUNS_PER_METHOD, tracebacks=len(crashes), wrong_exits=len(wrong),
            peak_mb=round(peak / 1e6, 1), seconds=round(time.perf_counter() - started, 1))
    assert not crashes, crashes[:5]
    assert not wrong, wrong[:5]
    assert peak < 400e6, f"{method} peaked at {peak / 1e6:.0f} MB"


def _extraction_reply(request: ChatRequest, replies: Iterator[str]) -> str:
    return next(replies)


@pytest.mark.parametrize("extractor", ["llm", "propositions"])
def test_bad_extraction_replies_fail_their_chunk_and_are_never_done(tmp_path: Path, extractor: str,
                                                                     figures: Callable[..., None]) -> None:
    replies = itertools.cycle([reply for kind, reply in messy_replies(seed=7, count=len(KINDS) * 2)
                               if kind != "valid_like"])
    settings = Settings()
    settings.llm.max_repairs = 0
    settings.index.document_summaries = "first_sentences"
    settings.index.summarize_communities = False
    backend = ScriptedBackend(rules=[("", lambda request: _extraction_reply(request, replies))])
    with ThinkGraph(tmp_path / "x.db", settings=settings, embedder=HashEmbedder(), backend=backend,
                    create=True) as tg:
        report = tg.index([FIXTURES / "corpus_small.jsonl"], extractor=extractor)
        chunks = tg.store.count_nodes().get("chunk", 0)
        failures = sum(tg.store.failure_counts().values())
        done = [n.id for n in tg.store.iter_nodes("chunk")
                if tg.store.is_done(EXTRACT_STAGE, f"{n.props['doc_id']}::{n.id}")]
    figures(f"bad replies to `index -e {extractor}`", runs=chunks,
            uncounted_failures=chunks - len(done) - failures + abs(report.extraction_failures - failures))
    assert report.chunks == chunks and report.extraction_failures == failures
    # a chunk is done only with a reply that validated; a failed one is recorded and left for the next run
    assert len(done) + failures == chunks
