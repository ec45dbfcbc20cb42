"""A corpus of bad command-line input, run through the real entry point (thinkgraph.cli.main) in-process:
each ends with one line on stderr naming the input and what was expected, and a non-zero exit code
from errors.ExitCode — never a traceback, never exit 0 when something was wrong."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import FIXTURES, SAMPLE_CORPUS
from thinkgraph.cli import main
from thinkgraph.errors import ExitCode

BINARY = bytes(range(256)) * 64


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Run]:
    monkeypatch.delenv("THINKGRAPH_LLM_BASE_URL", raising=False)

    def run(*args: str | Path) -> Run:
        monkeypatch.setattr(sys, "argv", ["thinkgraph", *map(str, args)])
        with pytest.raises(SystemExit) as exited:
            main()
        captured = capsys.readouterr()
        code = exited.value.code
        return Run(code if isinstance(code, int) else 1, captured.out, captured.err)
    return run


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bad")
    (root / "c.toml").write_text('[embedding]\nprovider = "hashing"\ndim = 64\n', encoding="utf-8")
    (root / "binary.bin").write_bytes(BINARY)
    (root / "binary.tsv").write_bytes(BINARY)
    (root / "binary.jsonl").write_bytes(BINARY)
    (root / "binary.json").write_bytes(BINARY)
    (root / "bad_openie.jsonl").write_text("\n".join(json.dumps(x) for x in [
        {"doc_id": 5, "triples": "abc"}, {"triples": [[1, 2]]}, {"doc_id": "d", "entities": None,
                                                                "triples": [["a", None, "b"]]}, [1, 2], "x"]))
    (root / "empty.jsonl").write_text("")
    (root / "questions.jsonl").write_text((FIXTURES / "sample_questions.jsonl").read_text())
    (root / "not_toml.toml").write_text("[llm\nbase_url = ")
    (root / "unknown_key.toml").write_text("[llm]\nwhatever = 1\n")
    (root / "exists.txt").write_text("already here")
    (root / "not_an_index.db").write_text("hello, I am text")
    (root / "empty.db").write_bytes(b"")
    (root / "adir").mkdir()
    return root


@pytest.fixture(scope="module")
def index(workdir: Path) -> Path:
    path = workdir / "idx.db"
    from thinkgraph.api import ThinkGraph
    from thinkgraph.config import load_settings

    with ThinkGraph(path, settings=load_settings(workdir / "c.toml", env={}), create=True) as tg:
        tg.index([SAMPLE_CORPUS])
    return path


CASES: list[tuple[str, Callable[[Path, Path], list[str | Path]], int, str]] = [
    ("no arguments to index", lambda w, i: ["-c", w / "c.toml", "-i", w / "n.db", "index"], ExitCode.USAGE,
     "give at least one PATH"),
    ("unknown flag", lambda w, i: ["ask", "--frobnicate"], ExitCode.USAGE, "No such option"),
    ("missing question", lambda w, i: ["ask"], ExitCode.USAGE, "Missing argument"),
    ("binary triples file", lambda w, i: ["-c", w / "c.toml", "-i", w / "t.db", "index", "--triples",
                                          w / "binary.tsv"], ExitCode.INPUT, "binary.tsv"),
    ("binary openie file", lambda w, i: ["-c", w / "c.toml", "-i", w / "o.db", "index", SAMPLE_CORPUS,
                                         "--openie", w / "binary.jsonl"], ExitCode.INPUT, "binary.jsonl"),
    ("binary typed graph", lambda w, i: ["-c", w / "c.toml", "-i", w / "k.db", "index", "--kg", w / "binary.json"],
     ExitCode.INPUT, "binary.json"),
    ("binary questions", lambda w, i: ["-c", w / "c.toml", "-i", i, "eval", w / "binary.jsonl", "--retrieval-only",
                                       "--out", w / "e1"], ExitCode.INPUT, "binary.jsonl"),
    ("openie entries of the wrong types", lambda w, i: ["-c", w / "c.toml", "-i", w / "o2.db", "index",
                                                        SAMPLE_CORPUS, "--openie", w / "bad_openie.jsonl"],
     ExitCode.INPUT, "bad_openie.jsonl"),
    ("missing path", lambda w, i: ["-c", w / "c.toml", "-i", w / "m.db", "index", w / "nowhere"], ExitCode.INPUT,
     "nowhere"),
    ("only bad files", lambda w, i: ["-c", w / "c.toml", "-i", w / "b.db", "index", w / "binary.bin"],
     ExitCode.INPUT, "nothing was indexed"),
    ("option value not a number", lambda w, i: ["-c", w / "c.toml", "-i", i, "ask", "q", "-o", "top_k=abc"],
     ExitCode.USAGE, "top_k"),
    ("top-k of zero", lambda w, i: ["-c", w / "c.toml", "-i", i, "ask", "q", "--top-k", "0"], ExitCode.USAGE,
     "top-k"),
    ("negative top-k option", lambda w, i: ["-c", w / "c.toml", "-i", i, "ask", "q", "-o", "top_k=-2"],
     ExitCode.USAGE, "top_k"),
    ("unknown method", lambda w, i: ["-c", w / "c.toml", "-i", i, "ask", "q", "-m", "magic"], ExitCode.USAGE,
     "unknown method"),
    ("unknown method in eval", lambda w, i: ["-c", w / "c.toml", "-i", i, "eval", w / "questions.jsonl",
                                             "-m", "foo", "--retrieval-only", "--out", w / "e2"],
     ExitCode.USAGE, "unknown method"),
    ("negative a2rag retries", lambda w, i: ["-c", w / "c.toml", "-i", i, "ask", "q", "-m", "a2rag", "-o", "i_max=-5"],
     ExitCode.USAGE, "i_max"),
    ("unknown method option", lambda w, i: ["-c", w / "c.toml", "-i", i, "ask", "q", "-m", "ppr", "-o", "zzz=1"],
     ExitCode.USAGE, "zzz"),
    ("lone surrogate in the question", lambda w, i: ["-c", w / "c.toml", "-i", i, "ask", "who\ud800?"],
     ExitCode.INPUT, "lone surrogate"),
    ("empty question", lambda w, i: ["-c", w / "c.toml", "-i", i, "ask", "  "], ExitCode.INPUT, "empty"),
    ("missing index", lambda w, i: ["-c", w / "c.toml", "-i", w / "typo.db", "ask", "q"], ExitCode.INPUT,
     "typo.db"),
    ("text file as index", lambda w, i: ["-c", w / "c.toml", "-i", w / "not_an_index.db", "inspect"],
     ExitCode.INPUT, "not_an_index.db"),
    ("empty file as index", lambda w, i: ["-c", w / "c.toml", "-i", w / "empty.db", "ask", "q"], ExitCode.INPUT,
     "empty file"),
    ("folder as index", lambda w, i: ["-c", w / "c.toml", "-i", w / "adir", "inspect"], ExitCode.INPUT, "adir"),
    ("export jsonl to a folder", lambda w, i: ["-c", w / "c.toml", "-i", i, "export", "jsonl", w / "adir"],
     ExitCode.INPUT, "adir"),
    ("unknown export format", lambda w, i: ["-c", w / "c.toml", "-i", i, "export", "xlsx", w / "x.xlsx"],
     ExitCode.USAGE, "xlsx"),
    ("eval --out is a file", lambda w, i: ["-c", w / "c.toml", "-i", i, "eval", w / "questions.jsonl",
                                           "--retrieval-only", "--out", w / "exists.txt"], ExitCode.INPUT,
     "exists.txt"),
    ("empty questions file", lambda w, i: ["-c", w / "c.toml", "-i", i, "eval", w / "empty.jsonl",
                                           "--retrieval-only", "--out", w / "e3"], ExitCode.INPUT, "empty.jsonl"),
    ("bad extraction-loss fraction", lambda w, i: ["-c", w / "c.toml", "-i", i, "eval", w / "questions.jsonl",
                                                   "--retrieval-only", "--extraction-loss", "2", "--out", w / "e4"],
     ExitCode.USAGE, "fraction"),
    ("missing config", lambda w, i: ["-c", w / "none.toml", "-i", i, "inspect"], ExitCode.USAGE, "none.toml"),
    ("config not TOML", lambda w, i: ["-c", w / "not_toml.toml", "-i", i, "inspect"], ExitCode.USAGE,
     "not valid TOML"),
    ("config with an unknown key", lambda w, i: ["-c", w / "unknown_key.toml", "-i", i, "inspect"],
     ExitCode.USAGE, "whatever"),
    ("remove an unknown document", lambda w, i: ["-c", w / "c.toml", "-i", i, "remove", "nope"], ExitCode.INPUT,
     "nope"),
    ("kgr strategy on another method", lambda w, i: ["-c", w / "c.toml", "-i", i, "ask", "q", "--strategy", "tot"],
     ExitCode.USAGE, "--strategy"),
    ("LLM method without an LLM", lambda w, i: ["-c", w / "c.toml", "-i", i, "ask", "q", "-m", "ircot"],
     ExitCode.USAGE, "needs an LLM"),
    ("serve on a port out of range", lambda w, i: ["-c", w / "c.toml", "serve", "--port", "99999"], ExitCode.USAGE,
     "--port"),
    ("serve with no workers", lambda w, i: ["-c", w / "c.toml", "serve", "--workers", "0"], ExitCode.USAGE,
     "--workers"),
    ("serve with a file as the workspaces folder", lambda w, i: ["-c", w / "c.toml", "serve", "--root",
                                                                 w / "exists.txt"], ExitCode.INPUT, "exists.txt"),
    ("export where nothing can be written", lambda w, i: ["-c", w / "c.toml", "-i", i, "export", "graphml",
                                                          w / "exists.txt" / "g.graphml"], ExitCode.INPUT,
     "cannot write"),
    ("unknown extractor", lambda w, i: ["-c", w / "c.toml", "-i", w / "x.db", "index", SAMPLE_CORPUS, "-e", "gpt"],
     ExitCode.USAGE, "unknown extractor"),
]


@pytest.mark.parametrize(("name", "args", "code", "message"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_and_a_non_zero_exit(cli: Callable[..., Run], workdir: Path, index: Path, name: str,
                                                   args: Callable[[Path, Path], list[str | Path]], code: int,
                                                   message: str, figures: Callable[..., None]) -> None:
    run = cli(*args(workdir, index))
    figures("bad command-line input", runs=1,
            tracebacks=int("Traceback" in run.err or "internal error" in run.err),
            wrong_exits=int(run.code != code))
    assert "Traceback" not in run.err and "internal error" not in run.err, run.err
    assert run.code == code, (run.code, run.err)
    assert message.lower() in run.err.lower(), run.err
    error_lines = [line for line in run.err.splitlines() if line.strip()]
    assert len(error_lines) <= 3, run.err  # one line (Click's usage errors add a usage line and a hint)


def test_read_only_index_answers_but_refuses_writes(cli: Callable[..., Run], workdir: Path, index: Path,
                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   figures: Callable[..., None]) -> None:
    copy = tmp_path / "ro.db"
    copy.write_bytes(index.read_bytes())
    copy.chmod(stat.S_IRUSR)
    if os.access(copy, os.W_OK):  # root may write any file: play the user who may not
        monkeypatch.setattr("thinkgraph.store.sqlite.os.access", lambda path, mode: mode != os.W_OK)
    run = cli("-c", workdir / "c.toml", "-i", copy, "index", SAMPLE_CORPUS)
    asked = cli("-c", workdir / "c.toml", "-i", copy, "ask", "Who founded the Harbor Hill Observatory?")
    figures("bad command-line input", runs=2, tracebacks=sum("Traceback" in r.err for r in (run, asked)),
            wrong_exits=int(run.code != ExitCode.INPUT) + int(asked.code != ExitCode.OK))
    assert run.code == ExitCode.INPUT and "read-only" in run.err.lower() and "Traceback" not in run.err
    assert asked.code == ExitCode.OK and "harbor-observatory.md" in asked.out
