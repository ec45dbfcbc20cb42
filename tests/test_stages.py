"""Crash-consistent derived stages: an indexing run stopped between "extraction done" and "derived
stages done" leaves an index that says which stage is missing, refuses to answer from it, and is
finished by the next `index` run into the same index an uninterrupted run builds."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from support import FIXTURES, SAMPLE_CORPUS, Behaviour, FakeOpenAIServer, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.errors import IncompleteIndexError
from thinkgraph.index.stages import missing_stages
from thinkgraph.llm.backend import ChatRequest, ChatResult

VOLATILE = ("index", "size_bytes", "stage_timings", "llm_usage", "graph_version", "llm_structured_output")


class Crash(Exception):
    """Stands for the process dying at a stage boundary."""


def _comparable(tg: ThinkGraph) -> dict[str, Any]:
    stats = {k: v for k, v in tg.stats().items() if k not in VOLATILE}
    ids, _ = tg.store.get_vectors()
    stats["vectors"] = len(ids)
    stats["edge_set"] = sorted((e.src, e.dst, str(e.type)) for e in tg.store.iter_edges())
    stats["community_texts"] = sorted(n.text for n in tg.store.iter_nodes("community"))
    return stats


def _crash_at(stage: str):  # noqa: ANN202
    def progress(name: str, done: int, total: int | None) -> None:
        if name == stage:
            raise Crash(stage)
    return progress


def _reference(tmp_path: Path, settings: Settings) -> dict[str, Any]:
    with ThinkGraph(tmp_path / "reference.db", settings=settings, embedder=HashEmbedder()) as tg:
        tg.index([SAMPLE_CORPUS])
        return _comparable(tg)


@pytest.mark.parametrize("stage", ["documents", "embed", "synonyms", "communities"])
def test_crash_at_a_stage_then_index_again_equals_an_uninterrupted_run(
        tmp_path: Path, settings: Settings, stage: str) -> None:
    path = tmp_path / "crashed.db"
    with ThinkGraph(path, settings=settings, embedder=HashEmbedder()) as tg, pytest.raises(Crash):
        tg.index([SAMPLE_CORPUS], progress=_crash_at(stage))
    with ThinkGraph.open(path, settings=settings, embedder=HashEmbedder()) as tg:
        missing = missing_stages(tg.store)
        assert missing and missing[-1] == "communities"
        with pytest.raises(IncompleteIndexError, match=f"{missing[0]}.*thinkgraph index"):
            tg.ask("Who founded the observatory?", method="naive")
        tg.index([SAMPLE_CORPUS])
        assert missing_stages(tg.store) == []
        assert _comparable(tg) == _reference(tmp_path, settings)


class _ShuffledReplies:
    """An LLM backend whose replies arrive after random delays, so completion order varies."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    async def chat(self, request: ChatRequest) -> ChatResult:
        await asyncio.sleep(self.rng.random() * 0.02)
        return ChatResult(_reply({"messages": list(request.messages)}))


def test_two_llm_runs_with_replies_in_different_orders_give_the_same_index(
        tmp_path: Path, settings: Settings) -> None:
    settings.index.extractor = "llm"
    settings.index.document_summaries = "first_sentences"
    settings.llm.concurrency = 8
    built = []
    for seed in (1, 2):
        with ThinkGraph(tmp_path / f"{seed}.db", settings=settings, embedder=HashEmbedder(),
                        backend=_ShuffledReplies(seed)) as tg:
            tg.index([SAMPLE_CORPUS, FIXTURES / "corpus_small.jsonl"])
            built.append(_comparable(tg) | {"entities": sorted((n.id, n.text) for n in tg.store.iter_nodes("entity"))})
    assert built[0] == built[1]


def test_removal_makes_every_stage_stale_until_rebuilt(tmp_path: Path, settings: Settings) -> None:
    with ThinkGraph(tmp_path / "i.db", settings=settings, embedder=HashEmbedder()) as tg:
        tg.index([SAMPLE_CORPUS])
        tg.remove_document("skarn-lighthouse.txt", rebuild=False)
        assert missing_stages(tg.store) == ["vectors", "synonyms", "communities"]
        tg.index([])
        assert missing_stages(tg.store) == []
        assert tg.stats()["stage_timings"]["synonyms"] >= 0


def _reply(payload: dict[str, Any]) -> str:
    prompt = payload["messages"][-1]["content"]
    if "## Text" not in prompt:
        return "A short summary of the group."
    words = [w.strip(".,") for w in prompt.split("## Text", 1)[1].split() if w[:1].isupper() and w != "Title:"][:2]
    a, b = (words + ["Alpha", "Beta"])[:2]
    return json.dumps({"entities": [{"entity_name": a, "entity_type": "Thing"},
                                    {"entity_name": b, "entity_type": "Thing"}],
                       "relationships": [{"source_entity": a, "target_entity": b, "relation": "relates to"}]})


def _cli(index: Path, config: Path, env: dict[str, str], *args: str) -> list[str]:
    return [sys.executable, "-m", "thinkgraph", "-c", str(config), "-i", str(index), *args]


def test_sigkill_during_community_summaries_then_index_finishes(tmp_path: Path) -> None:
    corpus = FIXTURES / "corpus_small.jsonl"
    config = tmp_path / "tg.toml"
    config.write_text('[embedding]\nprovider = "hashing"\n[index]\ndocument_summaries = "first_sentences"\n'
                      "[llm]\nconcurrency = 2\n", "utf-8")
    with FakeOpenAIServer() as server:
        server.responder = _reply
        server.default = Behaviour(delay_s=0.3)  # slow enough for the kill to land mid-summaries
        env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_")}
        env |= {"THINKGRAPH_LLM_BASE_URL": server.url, "THINKGRAPH_LLM_MODEL": "m"}
        killed, whole = tmp_path / "killed.db", tmp_path / "whole.db"
        proc = subprocess.Popen(_cli(killed, config, env, "index", str(corpus), "-e", "llm"), env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None and not any(
                "## Text" not in r["messages"][-1]["content"] and "Entities:" in r["messages"][-1]["content"]
                for r in list(server.chat_requests)):
            time.sleep(0.01)
        assert proc.poll() is None, "indexing ended before the community summaries"
        proc.send_signal(signal.SIGKILL)  # extraction is done; community summaries are under way
        proc.wait()
        server.default = Behaviour()
        asked = subprocess.run(_cli(killed, config, env, "ask", "Who is Lena?", "-m", "naive"), env=env,
                               capture_output=True, text=True, timeout=120)
        assert asked.returncode == 2 and "communities" in asked.stderr and "thinkgraph index" in asked.stderr
        finished = subprocess.run(_cli(killed, config, env, "index"), env=env, capture_output=True, text=True,
                                  timeout=120)
        assert finished.returncode == 0, finished.stderr
        subprocess.run(_cli(whole, config, env, "index", str(corpus), "-e", "llm"), env=env, check=True,
                       capture_output=True, timeout=120)
        stats = [json.loads(subprocess.run(_cli(i, config, env, "inspect", "--json"), env=env, check=True,
                                           capture_output=True, text=True, timeout=120).stdout)
                 for i in (killed, whole)]
    for s in stats:
        for key in VOLATILE:
            s.pop(key)
    assert stats[0] == stats[1] and stats[0]["missing_stages"] == []


def test_an_imported_graph_skips_communities_unless_asked_and_tog3_says_so(tmp_path: Path, settings: Settings) -> None:
    with ThinkGraph(tmp_path / "i.db", settings=settings, embedder=HashEmbedder()) as tg:
        report = tg.index([FIXTURES / "corpus_small.jsonl"], openie=FIXTURES / "openie_sample.jsonl")
        assert report.communities_skipped and "community" not in tg.stats()["nodes"]
        assert missing_stages(tg.store) == []
        with pytest.raises(IncompleteIndexError, match="without communities.*use_communities=false"):
            tg.ask("Who trained Lena Sorensen?", method="tog3")
        assert tg.ask("Who trained Lena Sorensen?", method="tog3", use_communities=False).citations
        tg.settings.index.communities = "always"
        again = tg.index([])
        assert again.rebuilt_stages == ["communities"] and tg.stats()["nodes"]["community"] == again.communities > 0
        tg.ask("Who trained Lena Sorensen?", method="tog3")
        tg.settings.index.communities = "never"
        tg.index([])
        assert "community" not in tg.stats()["nodes"] and not list(tg.store.iter_edges(["SUMMARY_FOR"]))


async def test_an_ask_waits_while_a_live_writer_finishes_the_stages(tmp_path: Path, settings: Settings) -> None:
    from thinkgraph.index.stages import DERIVED_STAGES, bump_graph_version, record_stage, writing

    with ThinkGraph(tmp_path / "i.db", settings=settings, embedder=HashEmbedder()) as tg:
        await tg.aindex([SAMPLE_CORPUS])
        with tg.store.transaction():
            version = bump_graph_version(tg.store)  # as a writer's commit does

        async def finish() -> None:
            await asyncio.sleep(0.3)
            for stage in DERIVED_STAGES:
                record_stage(tg.store, stage, version)

        with writing(tg.store):
            done = asyncio.create_task(finish())
            answer = await tg.aask("Who founded the observatory?", method="naive")
            await done
        assert answer.citations


async def test_an_ask_that_outwaits_a_running_writer_names_it_and_does_not_send_the_user_to_index(
        tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long `index` run in another process: the ask waits WAIT_FOR_WRITER_S, then says who is still
    writing (running `thinkgraph index` then, as the plain message says, would start a second writer)."""
    from thinkgraph.index import stages
    from thinkgraph.index.stages import bump_graph_version, writing

    monkeypatch.setattr(stages, "WAIT_FOR_WRITER_S", 0.2)
    with ThinkGraph(tmp_path / "i.db", settings=settings, embedder=HashEmbedder()) as tg:
        await tg.aindex([SAMPLE_CORPUS])
        with tg.store.transaction():
            bump_graph_version(tg.store)  # the writer's commit; its stages are not built yet
        with writing(tg.store), pytest.raises(IncompleteIndexError, match=rf"indexing run \(pid {os.getpid()}\)"):
            await tg.aask("Who founded the observatory?", method="naive")
        with pytest.raises(IncompleteIndexError, match="indexing did not finish"):  # the writer is gone
            await tg.aask("Who founded the observatory?", method="naive")


async def test_an_ask_that_saw_a_complete_version_answers_though_a_writer_changes_the_graph_at_once(
        tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """The service race: the stages complete, the wait ends, and another worker commits a new document
    before the ask checks again. The ask answers from the complete version it saw (no 503)."""
    from thinkgraph.index import stages

    with ThinkGraph(tmp_path / "i.db", settings=settings, embedder=HashEmbedder()) as tg:
        await tg.aindex([SAMPLE_CORPUS])
        waited = stages.wait_until_complete

        async def wait_then_a_commit_lands(store, timeout_s: float | None = None) -> list[str]:
            missing = await waited(store, timeout_s)
            with store.transaction():
                stages.bump_graph_version(store)  # another worker's commit, its stages not built yet
            return missing

        monkeypatch.setattr(stages, "wait_until_complete", wait_then_a_commit_lands)
        answer = await tg.aask("Who founded the observatory?", method="naive")
        assert answer.citations
        assert stages.missing_stages(tg.store)  # the new version's stages are indeed missing
        with pytest.raises(IncompleteIndexError):  # and with no writer alive, the next ask says so
            await tg.aask("Who founded the observatory?", method="naive")


async def test_an_ask_answers_when_the_writer_finishes_between_its_two_reads(
        tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ask reads the stages (missing), then the writers: by then the writer has recorded its stages
    and taken its mark off. The stages are complete, and the ask answers (it had failed with a 503)."""
    from thinkgraph.index import stages

    with ThinkGraph(tmp_path / "i.db", settings=settings, embedder=HashEmbedder()) as tg:
        await tg.aindex([SAMPLE_CORPUS])
        with tg.store.transaction():
            version = stages.bump_graph_version(tg.store)  # the writer's commit; its stages not built yet

        def writer_done(store: object) -> list[int]:  # the writer finishes just before the ask looks
            for stage in stages.DERIVED_STAGES:
                stages.record_stage(tg.store, stage, version)
            return []

        monkeypatch.setattr(stages, "_writers", writer_done)
        answer = await tg.aask("Who founded the observatory?", method="naive")
        assert answer.citations and not stages.missing_stages(tg.store)


async def test_an_index_without_passages_says_so_instead_of_answering(tmp_path: Path, settings: Settings) -> None:
    """e.g. `index -e llm` killed before its first commit: documents pending, nothing to retrieve."""
    from thinkgraph.models import DocumentRecord

    with ThinkGraph(tmp_path / "e.db", settings=settings, embedder=HashEmbedder(), create=True) as tg:
        await tg.aindex([])
        tg.store.upsert_document(DocumentRecord(id="a.md", source="a.md", title="a", content_hash="x", n_chars=9))
        with pytest.raises(IncompleteIndexError, match=r"no passages to retrieve \(1 pending\)"):
            await tg.aask("Who founded the observatory?", method="naive")
