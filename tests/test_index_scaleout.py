"""Several `thinkgraph index` runs on one index share the documents (SQLite and PostgreSQL): no LLM
call is repeated, every document is indexed once, and the derived stages are built once, by the
run that ends last. Claims of a process that died are taken over."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from support import Behaviour, FakeOpenAIServer
from thinkgraph.models import SourceDocument
from thinkgraph.store import open_store
from thinkgraph.store.claims import DOC, RUN, WorkClaims, derived_turn, holder_is_dead, process_owner
from thinkgraph.store.common import CHANGES

N_DOCS = 12


def _reply(payload: dict[str, Any]) -> str:
    prompt = payload["messages"][-1]["content"]
    if "## Text" not in prompt:
        return "A short summary."
    name = prompt.split("## Text", 1)[1].split()[1].strip(".,")
    return json.dumps({"entities": [{"entity_name": name, "entity_type": "Thing"}],
                       "relationships": [{"source_entity": name, "target_entity": "Hub", "relation": "links to"}]})


@pytest.fixture(params=["sqlite", "postgres"])
def index_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "shared.db")
    return request.getfixturevalue("pg_url")()


def test_two_index_runs_share_the_work(index_location: str, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    texts = [f"Entity{i} is thing {i} of the Hub." for i in range(N_DOCS)]  # the reply links each to "Hub"
    corpus.write_text("\n".join(json.dumps({"id": f"d{i}", "title": f"Doc {i}", "text": text})
                                for i, text in enumerate(texts)), "utf-8")
    config = tmp_path / "tg.toml"
    config.write_text('[embedding]\nprovider = "hashing"\ndim = 64\n[llm]\nconcurrency = 1\n'
                      '[index]\nbatch_docs = 2\ndocument_summaries = "first_sentences"\n', "utf-8")
    with FakeOpenAIServer() as server:
        server.responder = _reply
        server.default = Behaviour(delay_s=0.4)  # a slow model: both runs are busy at the same time
        env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_")}
        env |= {"THINKGRAPH_LLM_BASE_URL": server.url, "THINKGRAPH_LLM_MODEL": "m"}
        cmd = [sys.executable, "-m", "thinkgraph", "-c", str(config), "-i", index_location, "index", str(corpus),
               "-e", "llm", "--json"]
        runs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(2)]
        outputs = [run.communicate(timeout=300) for run in runs]
        extractions = [r for r in server.chat_requests if "## Text" in r["messages"][-1]["content"]]
    assert [run.returncode for run in runs] == [0, 0], [err for _, err in outputs]
    reports = [json.loads(out) for out, _ in outputs]
    assert len({r["messages"][-1]["content"] for r in extractions}) == N_DOCS
    assert len(extractions) == N_DOCS  # no chunk was sent to the model twice
    assert sum(r["indexed"] for r in reports) == N_DOCS and all(r["indexed"] > 0 for r in reports)
    assert [r["communities"] > 0 for r in reports].count(True) == 1  # the derived stages ran once
    store = open_store(index_location, create=False)
    try:
        assert {str(d.status) for d in store.list_documents()} == {"done"} and len(store.list_documents()) == N_DOCS
        assert store.live_claims(DOC) == {} and store.live_claims(RUN) == {}
        assert store.count_nodes()["community"] > 0
    finally:
        store.close()


def _dead_owner() -> str:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return process_owner().replace(f":{os.getpid()}:", f":{finished.stdout.strip()}:")


def test_claims_of_a_dead_process_are_taken_over_at_once(index_location: str) -> None:
    store = open_store(index_location)
    try:
        dead, remote = _dead_owner(), "other-host-1234abcd:42:beef"
        assert holder_is_dead(dead) and not holder_is_dead(remote) and not holder_is_dead(process_owner())
        assert store.claim(DOC, "a", dead, 600) and store.claim(DOC, "b", remote, 600)
        claims = WorkClaims(store, lease_s=600)
        assert claims.take(DOC, "a")  # its holder on this machine is gone: no need to wait for the lease
        assert not claims.take(DOC, "b")  # a holder elsewhere may be alive: wait for its lease
        assert not claims.take_document(SourceDocument(id="b", title="b", text="t", source="b.txt"))
        assert [d.id for d in claims.deferred] == ["b"]
        assert store.claim(RUN, remote, remote, 600)
        assert claims.others_running()
        claims.stop()
        assert store.live_claims(DOC) == {"b": remote}
    finally:
        store.close()


def test_leases_are_renewed_while_held(index_location: str) -> None:
    store = open_store(index_location)
    claims = WorkClaims(store, lease_s=0.4).start()
    try:
        assert claims.take(DOC, "x")
        time.sleep(1.0)  # two and a half leases: alive only because it was renewed
        assert store.live_claims(DOC) == {"x": claims.owner}
    finally:
        claims.stop()
    assert store.live_claims(DOC) == {} and store.live_claims(RUN) == {}
    store.close()


def test_derived_stages_once_per_change(index_location: str) -> None:
    store = open_store(index_location)
    built: list[str] = []

    async def turn(label: str) -> None:
        async with derived_turn(store) as now:
            if now.needed:
                await asyncio.sleep(0.2)
                built.append(label)
                now.built()

    async def both() -> None:
        await asyncio.gather(turn("a"), turn("b"))

    try:
        asyncio.run(both())
        assert built == []  # nothing changed yet
        store.increment_meta(CHANGES)
        asyncio.run(both())
        assert len(built) == 1  # two runs ending together: one builds, the other finds it done
        store.increment_meta(CHANGES)
        asyncio.run(turn("c"))
        assert built[-1] == "c"
    finally:
        store.close()

