"""Killing `thinkgraph index` mid-way loses at most the in-flight work; the next run resumes and
asks the LLM nothing it had already answered."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from support import Behaviour, FakeOpenAIServer
from thinkgraph.store.sqlite import SQLiteStore


def _reply(payload: dict[str, Any]) -> str:
    prompt = payload["messages"][-1]["content"]
    if "## Text" not in prompt:
        return "A short summary."
    name = prompt.split("## Text", 1)[1].split()[1].strip(".,")
    return json.dumps({"entities": [{"entity_name": name, "entity_type": "Thing"}], "relationships": []})


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "kill"])
def test_a_killed_index_resumes_and_repeats_no_finished_call(tmp_path: Path, stop: signal.Signals) -> None:
    corpus = tmp_path / "corpus.jsonl"
    n_docs = 12
    corpus.write_text("\n".join(json.dumps({"id": f"d{i}", "title": f"Doc {i}", "text": f"Entity{i} is thing {i}."})
                                for i in range(n_docs)), "utf-8")
    index = tmp_path / "i.db"
    with FakeOpenAIServer() as server:
        server.responder = _reply
        server.default = Behaviour(delay_s=0.4)  # slow model: the kill lands mid-run
        env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_")}
        env |= {"THINKGRAPH_LLM_BASE_URL": server.url, "THINKGRAPH_LLM_MODEL": "m"}
        cmd = [sys.executable, "-m", "thinkgraph", "-i", str(index), "index", str(corpus), "-e", "llm"]
        config = tmp_path / "tg.toml"
        config.write_text("[llm]\nconcurrency = 2\n[index]\nbatch_docs = 4\nsummarize_communities = false\n"
                          "document_summaries = \"first_sentences\"\n", "utf-8")
        cmd[3:3] = ["-c", str(config)]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 240
        while len(server.chat_requests) < 6 and time.time() < deadline:
            time.sleep(0.05)
        proc.send_signal(stop)
        _, stderr = proc.communicate(timeout=60)
        if stop == signal.SIGTERM:  # the tidy path of Ctrl-C: exit 130 and one line, no traceback
            assert proc.returncode == 130 and b"run the same command again to resume" in stderr
            assert b"Traceback" not in stderr
        first_run = len(server.chat_requests)
        assert 6 <= first_run < n_docs
        store = SQLiteStore(index)
        done_before = sum(store.is_done("extract", f"d{i}::{n.id}") for i in range(n_docs)
                          for n in store.iter_nodes("chunk") if n.props.get("doc_id") == f"d{i}")
        store.close()
        assert done_before >= 1

        server.default = Behaviour()
        result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        second_run = len(server.chat_requests) - first_run
        # only chunks without a stored result are asked again (a reply in flight at the kill may repeat)
        assert second_run <= n_docs - done_before
        assert first_run + second_run <= n_docs + 2
    store = SQLiteStore(index)
    assert {str(d.status) for d in store.list_documents()} == {"done"}
    assert len(store.list_documents()) == n_docs
    store.close()
