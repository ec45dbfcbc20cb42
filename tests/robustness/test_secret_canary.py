"""A secret planted where a broken or hostile server echoes it (error bodies, replies, the endpoint URL)
never reaches any output: stdout, stderr, logs, the index file, eval outputs."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from support import FIXTURES, SAMPLE_CORPUS, Behaviour, FakeOpenAIServer
from thinkgraph.cli import main

CANARY = "sk-canary-5be1c0ffee42"
URL_PASSWORD = "pw-canary-77aa"


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    monkeypatch.setattr(sys, "argv", ["thinkgraph", *args])
    with pytest.raises(SystemExit):
        main()
    captured = capsys.readouterr()
    return captured.out + captured.err


def _files_under(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())


def test_api_key_echoed_by_the_server_is_never_shown_or_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str],
                                                               caplog: pytest.LogCaptureFixture,
                                                               figures: Callable[..., None]) -> None:
    caplog.set_level(logging.DEBUG)
    echo = f'{{"error": {{"message": "bad request from key {CANARY}", "auth": "Bearer {CANARY}"}}}}'
    with FakeOpenAIServer() as server:
        def reply(payload: dict) -> str | Behaviour:
            content = payload["messages"][-1]["content"]
            if "knowledge graph" in content:  # extraction: an error that echoes the key
                return Behaviour(status=400, body=echo)
            if "Summar" in content:
                return Behaviour(status=500, body=echo)
            return f"The key is {CANARY} [1]"  # a reply that echoes it
        server.responder = reply
        monkeypatch.setenv("THINKGRAPH_LLM_API_KEY", CANARY)
        monkeypatch.setenv("THINKGRAPH_LLM_BASE_URL", server.url)
        config = tmp_path / "c.toml"
        config.write_text('[llm]\nmax_retries = 0\nbackoff_s = 0.01\n[embedding]\nprovider = "hashing"\ndim = 64\n')
        index = tmp_path / "i.db"
        shown = _run(monkeypatch, capsys, "-v", "-c", str(config), "-i", str(index), "index", str(SAMPLE_CORPUS),
                     "-e", "llm")
        shown += _run(monkeypatch, capsys, "-v", "-c", str(config), "-i", str(index), "ask", "Who?", "-m", "none",
                      "--json")
        shown += _run(monkeypatch, capsys, "-c", str(config), "-i", str(index), "inspect", "--json")
        shown += _run(monkeypatch, capsys, "-c", str(config), "-i", str(index), "documents", "--json")
        shown += _run(monkeypatch, capsys, "-c", str(config), "-i", str(index), "eval",
                      str(FIXTURES / "sample_questions.jsonl"), "-m", "naive", "--out", str(tmp_path / "eval"))
    leaks = [where for where, text in (("output", shown), ("log", caplog.text)) if CANARY in text]
    leaks += ["files"] if CANARY.encode() in _files_under(tmp_path) else []
    figures("API key echoed by the server (index, ask, inspect, documents, eval)", runs=1, leaked=len(leaks))
    assert server.headers and any(CANARY in h.get("Authorization", "") for h in server.headers)  # it was sent
    assert CANARY not in shown and CANARY not in caplog.text
    assert CANARY.encode() not in _files_under(tmp_path)
    assert "***" in shown  # the echoes were there, masked
    assert json.loads((tmp_path / "eval" / "summary.json").read_text())


def test_password_in_the_endpoint_url_is_never_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str],
                                                     caplog: pytest.LogCaptureFixture,
                                                     figures: Callable[..., None]) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("THINKGRAPH_LLM_BASE_URL", f"http://user:{URL_PASSWORD}@127.0.0.1:9/v1")  # nothing listens
    config = tmp_path / "c.toml"
    config.write_text('[llm]\nmax_retries = 0\n[embedding]\nprovider = "hashing"\ndim = 64\n')
    index = tmp_path / "i.db"
    shown = _run(monkeypatch, capsys, "-c", str(config), "-i", str(index), "index", str(SAMPLE_CORPUS), "-e", "llm")
    shown += _run(monkeypatch, capsys, "-v", "-c", str(config), "-i", str(index), "ask", "Who?", "-m", "none")
    leaks = [where for where, text in (("output", shown), ("log", caplog.text)) if URL_PASSWORD in text]
    leaks += ["files"] if URL_PASSWORD.encode() in _files_under(tmp_path) else []
    figures("password in the endpoint URL (index, ask)", runs=1, leaked=len(leaks))
    assert "127.0.0.1:9" in shown and "***" in shown  # the error names the endpoint, masked
    assert URL_PASSWORD not in shown and URL_PASSWORD not in caplog.text
    assert URL_PASSWORD.encode() not in _files_under(tmp_path)
