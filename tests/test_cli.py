"""The `thinkgraph` command through its real entry point (a subprocess with the default, packaged
embedding model), including an LLM answer from the local fake OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import FIXTURES, SAMPLE_CORPUS, Behaviour, FakeOpenAIServer
from thinkgraph.errors import ExitCode


def run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_")}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "thinkgraph", *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def built_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "sample.db"
    result = run("--index", str(path), "index", str(SAMPLE_CORPUS))
    assert result.returncode == 0, result.stderr
    assert "indexed 4 documents" in result.stdout
    assert "synonyms: up to date" not in result.stdout and "levels" in result.stdout
    (slowest,) = [line for line in result.stdout.splitlines() if line.startswith("slowest stages: ")]
    assert slowest.count(" s, ") == 2 and slowest.endswith(" s")  # three stages, not every one
    return path


def test_a_run_with_nothing_new_says_the_derived_stages_are_up_to_date(built_index: Path) -> None:
    again = run("--index", str(built_index), "index", str(SAMPLE_CORPUS))
    assert again.returncode == 0, again.stderr
    assert "4 unchanged" in again.stdout and "synonyms: up to date; communities: up to date" in again.stdout


def test_ask_without_llm_prints_evidence_with_provenance(built_index: Path) -> None:
    result = run("-i", str(built_index), "ask", "Who trained Lena Sorensen?")
    assert result.returncode == 0, result.stderr
    assert "needs an LLM endpoint" in result.stdout
    assert "people.md chars" in result.stdout and "Graph evidence" in result.stdout


def test_inspect_json_and_export(built_index: Path, tmp_path: Path) -> None:
    result = run("-i", str(built_index), "inspect", "--json")
    stats = json.loads(result.stdout)
    assert stats["documents"] == {"done": 4} and stats["embedding_model"].endswith("all-MiniLM-L6-v2")
    assert stats["embedding_dim"] == "384" and stats["nodes"]["community"] > 0
    human = run("-i", str(built_index), "inspect")
    assert "CO_OCCURS" in human.stdout and "LLM usage" in human.stdout
    assert "(no LLM call yet)" in human.stdout  # the sample index is built without an LLM
    out = tmp_path / "g.graphml"
    assert run("-i", str(built_index), "export", "graphml", str(out)).returncode == 0
    assert out.stat().st_size > 1000


def test_ask_with_llm_against_local_server(built_index: Path) -> None:
    with FakeOpenAIServer() as server:
        server.push(Behaviour(content="Joseph Okafor [1]"))
        result = run("-i", str(built_index), "ask", "Who trained Lena Sorensen?", "--method", "naive", "--json",
                     env={"THINKGRAPH_LLM_BASE_URL": server.url, "THINKGRAPH_LLM_MODEL": "local-model",
                          "THINKGRAPH_LLM_API_KEY": "sk-cli-secret"})
        assert result.returncode == 0, result.stderr
        answer = json.loads(result.stdout)
        assert answer["text"] == "Joseph Okafor" and answer["status"] == "answered"
        assert answer["citations"][0]["doc_id"] == "people.md"
        assert answer["cost"]["calls"] == 1 and answer["cost"]["prompt_tokens"] == 11
        assert server.chat_requests[0]["model"] == "local-model"
        assert "sk-cli-secret" not in result.stdout + result.stderr
        # the same question again is served from the index's LLM cache
        again = run("-i", str(built_index), "ask", "Who trained Lena Sorensen?", "-m", "naive", "--trace",
                    env={"THINKGRAPH_LLM_BASE_URL": server.url, "THINKGRAPH_LLM_MODEL": "local-model"})
        assert "Joseph Okafor" in again.stdout and "(1 cached)" in again.stdout
        assert "responder/answer.from_passages" in again.stdout
        assert len(server.chat_requests) == 1


def test_a_failed_answer_is_printed_and_exits_with_the_upstream_code(built_index: Path) -> None:
    with FakeOpenAIServer() as server:
        server.push(Behaviour(content="   "))  # a reply with no answer in it
        env = {"THINKGRAPH_LLM_BASE_URL": server.url, "THINKGRAPH_LLM_MODEL": "m"}
        result = run("-i", str(built_index), "ask", "Who founded the rowing club?", "-m", "naive", "--json", env=env)
        assert result.returncode == ExitCode.UPSTREAM, result.stderr
        answer = json.loads(result.stdout)
        assert answer["status"] == "failed" and answer["message"] == "the model returned an empty answer"
        server.push(Behaviour(content="[1]"))  # passage numbers only, and so again when asked once more
        server.push(Behaviour(content="[1]"))
        failed = run("-i", str(built_index), "ask", "Who rowed for the club?", "-m", "naive", env=env)
        assert failed.returncode == ExitCode.UPSTREAM
        assert "No answer (naive, failed)" in failed.stdout and "passage numbers only" in failed.stdout
        server.push(Behaviour(content="Joseph Okafor founded it [1]"))
        human = run("-i", str(built_index), "ask", "Who founded the club in Velden?", "-m", "naive", env=env)
        assert human.returncode == 0 and "Joseph Okafor" in human.stdout


def test_unreachable_llm_is_one_line_error(built_index: Path) -> None:
    result = run("-i", str(built_index), "ask", "Who?", "-m", "naive",
                 env={"THINKGRAPH_LLM_BASE_URL": "http://127.0.0.1:9/v1"},
                 cwd=FIXTURES)  # a thinkgraph.toml there would change settings; there is none
    assert result.returncode == ExitCode.UPSTREAM
    assert result.stderr.strip().startswith("error: LLM endpoint http://127.0.0.1:9/v1 failed after")
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, message, code", [
    (["ask", "hi", "-m", "magic"], "unknown method 'magic'; valid methods: none, naive, ppr", ExitCode.USAGE),
    (["ask", "hi"], "no index at", ExitCode.INPUT),
    (["index", "does/not/exist"], "no such file or directory", ExitCode.INPUT),
    (["index", "x.txt", "--extractor", "llm"], "extractor 'llm' needs an LLM endpoint", ExitCode.USAGE),
])
def test_errors_are_one_line(tmp_path: Path, built_index: Path, args: list[str], message: str, code: int) -> None:
    index = built_index if "magic" in args else tmp_path / "new.db"
    if "x.txt" in args:
        (tmp_path / "x.txt").write_text("Some text.", "utf-8")
        args = [a if a != "x.txt" else str(tmp_path / "x.txt") for a in args]
    result = run("-i", str(index), *args)
    assert result.returncode == code, result.stdout
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_corrupt_index_and_bad_config(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 200)
    result = run("-i", str(bad), "inspect")
    assert result.returncode == ExitCode.INPUT and "not a thinkgraph index" in result.stderr
    cfg = tmp_path / "tg.toml"
    cfg.write_text("[llm]\napi_key = 'sk-in-file'\n", "utf-8")
    result = run("-c", str(cfg), "-i", str(bad), "inspect")
    assert result.returncode == 1 and "must not be in a file" in result.stderr
    assert "sk-in-file" not in result.stderr


def test_an_answer_that_cites_nothing_still_shows_the_passages_retrieved(built_index: Path) -> None:
    with FakeOpenAIServer() as server:
        server.default = Behaviour(content="Unknown")  # every draft: so a2rag abstains
        env = {"THINKGRAPH_LLM_BASE_URL": server.url, "THINKGRAPH_LLM_MODEL": "m"}
        result = run("-i", str(built_index), "ask", "Who trained Lena Sorensen?", "-m", "a2rag",
                     "-o", "tau_g=0", env=env)
    assert result.returncode == 0, result.stderr
    assert "Evidence" not in result.stdout
    listed = result.stdout.split("Passages retrieved (no answer cites them", 1)[1]
    assert listed.startswith(")\n(1) ") or listed.startswith(", the first 5 of")
    assert "Lena Sorensen" in listed


def test_a2rag_and_review_through_the_cli(built_index: Path) -> None:
    result = run("-i", str(built_index), "ask", "Who made the lens of the Skarn Lighthouse?", "-m", "a2rag",
                 "-o", "k_hops=3", "--trace", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["status"] == "evidence_only" and answer["citations"]
    assert [s["action"] for s in answer["trace"]][:2] == ["gate", "seeds"]
    bad = run("-i", str(built_index), "ask", "q", "-m", "a2rag", "-o", "nokey")
    assert bad.returncode == 1 and "not KEY=VALUE" in bad.stderr
    listed = run("-i", str(built_index), "review", "list")
    assert listed.returncode == 0 and "no pending proposals" in listed.stdout
    wrong = run("-i", str(built_index), "review", "approve", "99")
    assert wrong.returncode == ExitCode.INPUT and "no pending proposal 99" in wrong.stderr


def test_topg_through_the_cli(built_index: Path, tmp_path: Path) -> None:
    # the default, model-free index: its sentences are topg's propositions, offline (issue 49)
    result = run("-i", str(built_index), "ask", "Who made the lens?", "-m", "topg", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["status"] == "evidence_only" and answer["citations"]
    assert any(n["type"] == "proposition" and "lens" in n["text"] for n in answer["evidence"]["nodes"])
    # an index built without them says what to do (input, exit 2)
    lean = tmp_path / "lean.toml"
    lean.write_text("[index]\nnolm_propositions = false\n", encoding="utf-8")
    bare = tmp_path / "bare.db"
    assert run("-i", str(bare), "-c", str(lean), "index", str(SAMPLE_CORPUS)).returncode == 0
    result = run("-i", str(bare), "-c", str(lean), "ask", "Who made the lens?", "-m", "topg")
    assert result.returncode == ExitCode.INPUT and "topg needs propositions or triplets" in result.stderr
    index = tmp_path / "openie.db"
    assert run("-i", str(index), "index", str(FIXTURES / "corpus_small.jsonl"), "--openie",
               str(FIXTURES / "openie_sample.jsonl")).returncode == 0
    result = run("-i", str(index), "ask", "Who trained Lena Sorensen?", "-m", "topg", "-o", "mode=naive", "-k", "4",
                 "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["status"] == "evidence_only" and answer["method"] == "topg"
    assert "Joseph Okafor trained Lena Sorensen" in [n["text"] for n in answer["evidence"]["nodes"]]


def test_llm_only_methods_say_so_in_one_line(built_index: Path) -> None:
    for name in ("ircot", "none", "kgr"):
        result = run("-i", str(built_index), "ask", "Who trained Lena Sorensen?", "-m", name)
        assert result.returncode == 1 and f"method '{name}' needs an LLM endpoint" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_eval_through_the_cli_retrieval_only_and_with_the_real_client(built_index: Path, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "Who trained Lena Sorensen?", "answer": "Joseph Okafor",
                                     "supporting_ids": ["people.md"]}) + "\n", encoding="utf-8")
    result = run("-i", str(built_index), "eval", str(questions), "-m", "naive", "-m", "ppr", "--retrieval-only",
                 "--out", str(tmp_path / "r"), "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [r["method"] for r in rows] == ["naive", "ppr"] and rows[0]["recall@5"] == 100.0
    bad = run("-i", str(built_index), "eval", str(questions), "-m", "ppr:hop_chain=maybe", "--retrieval-only",
              "--out", str(tmp_path / "bad"))
    assert bad.returncode == ExitCode.USAGE and "hop_chain" in bad.stderr and len(bad.stderr.splitlines()) == 1
    with FakeOpenAIServer() as server:
        server.push(Behaviour(content="Joseph Okafor [1]"))
        result = run("-i", str(built_index), "eval", str(questions), "-m", "naive", "--out", str(tmp_path / "e"),
                     env={"THINKGRAPH_LLM_BASE_URL": server.url})
    assert result.returncode == 0, result.stderr
    assert "100.0" in result.stdout and (tmp_path / "e" / "summary.json").exists()
    assert "## Answer quality" in (tmp_path / "e" / "report.md").read_text()
    summary = json.loads((tmp_path / "e" / "summary.json").read_text())
    assert summary[0]["em"] == 100.0 and summary[0]["calls_mean"] == 1


def test_eval_extraction_loss_and_plots_through_the_cli(built_index: Path, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "Who trained Lena Sorensen?", "answer": "Joseph Okafor",
                                     "supporting_ids": ["people.md"]}) + "\n", encoding="utf-8")
    result = run("-i", str(built_index), "eval", str(questions), "-m", "ppr", "--retrieval-only", "--out",
                 str(tmp_path / "r"), "--extraction-loss", "0,0.5", "--loss-seeds", "2", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [(r["fraction"], r["seeds"]) for r in data["extraction_loss"]] == [(0.0, 1), (0.5, 2)]
    report = (tmp_path / "r" / "report.md").read_text()
    assert "## Extraction loss" in report and "![extraction_loss](extraction_loss.png)" in report
    assert (tmp_path / "r" / "extraction_loss.png").read_bytes()[:4] == b"\x89PNG"
    bad = run("-i", str(built_index), "eval", str(questions), "--retrieval-only", "--extraction-loss", "2")
    assert bad.returncode == 1 and "fraction must be in [0, 1)" in bad.stderr


def test_questions_command_generates_abstract_questions(built_index: Path, tmp_path: Path) -> None:
    def reply(payload: dict) -> str:
        prompt = payload["messages"][-1]["content"]
        if "Imagine 1 different people" in prompt:
            return json.dumps({"users": [{"user": "coach", "tasks": ["plan training"]}]})
        if "Write 2 questions" in prompt:
            return json.dumps({"questions": ["What shapes the athletes' careers?", "How do coaches differ?"]})
        return "A collection about athletes and their coaches."

    target = tmp_path / "abstract.jsonl"
    with FakeOpenAIServer() as server:
        server.responder = reply
        result = run("-i", str(built_index), "questions", str(target), "--users", "1", "--tasks", "1",
                     "--per-task", "2", env={"THINKGRAPH_LLM_BASE_URL": server.url})
    assert result.returncode == 0, result.stderr
    assert "wrote 2 questions" in result.stdout
    rows = [json.loads(x) for x in target.read_text().splitlines()]
    assert rows[0]["user"] == "coach" and rows[1]["question"] == "How do coaches differ?"
    no_llm = run("-i", str(built_index), "questions", str(tmp_path / "x.jsonl"))
    assert no_llm.returncode == 1 and "needs an LLM" in no_llm.stderr


def test_kg_import_and_kgr_tot_agent_through_the_cli(tmp_path: Path) -> None:
    index = tmp_path / "kg.db"
    config = tmp_path / "thinkgraph.toml"
    config.write_text('[embedding]\nprovider = "hashing"\ndim = 64\n', encoding="utf-8")
    imported = run("-i", str(index), "-c", str(config), "index", "--kg", str(FIXTURES / "grbench_small.json"))
    assert imported.returncode == 0, imported.stderr
    assert "imported 8 nodes and 18 edges (0 records skipped)" in imported.stdout

    def reply(payload: dict) -> str:
        prompt = payload["messages"][-1]["content"].split("Now your task.")[-1]  # after the few-shot examples
        if "Several reasoning chains" in payload["messages"][-1]["content"]:
            return "The best choices are: 1"
        if "Observation 1:" in prompt:
            return "Thought: found it.\nAction: Finish[Tomasz Nowak]"
        return "Thought: search.\nAction: RetrieveNode[Tomasz Nowak]"

    with FakeOpenAIServer() as server:
        server.responder = reply
        result = run("-i", str(index), "-c", str(config), "ask", "Who is Tomasz?", "--method", "kgr",
                     "--strategy", "tot", "--interaction", "agent", "-o", "k=2", "-o", "t=1", "--json",
                     env={"THINKGRAPH_LLM_BASE_URL": server.url})
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["text"] == "Tomasz Nowak" and answer["stats"]["outcome"] == "finished"
    assert any(step["agent"] == "evaluator" for step in answer["trace"])
    assert answer["evidence"]["nodes"][0]["id"] == "a2"
    wrong = run("-i", str(index), "ask", "q", "--strategy", "tot")
    assert wrong.returncode == 1 and "--strategy applies to method kgr only" in wrong.stderr
    missing = run("-i", str(tmp_path / "other.db"), "index", "--kg", str(tmp_path / "none.json"))
    assert missing.returncode == ExitCode.INPUT and "graph file not found" in missing.stderr


def test_eval_seed_sample_and_run_record(built_index: Path, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Who trained Lena Sorensen {i}?",
                                             "answer": "Joseph Okafor"}) + "\n" for i in range(5)), encoding="utf-8")
    with FakeOpenAIServer() as server:
        server.push(Behaviour(content="Joseph Okafor [1]"), Behaviour(content="Joseph Okafor [1]"))
        result = run("-i", str(built_index), "eval", str(questions), "-m", "naive", "--sample", "2", "--seed", "7",
                     "--out", str(tmp_path / "e"), "--json", env={"THINKGRAPH_LLM_BASE_URL": server.url})
        sent = server.chat_requests
    assert result.returncode == 0, result.stderr
    record = json.loads((tmp_path / "e" / "run.json").read_text())
    assert record["seed"] == 7 and record["count"] == 2 and record["sample"] == 2
    asked = [json.loads(x)["qid"] for x in (tmp_path / "e" / "records.jsonl").read_text().splitlines()]
    import random
    expected = [q["id"] for q in random.Random(7).sample([{"id": f"q{i}"} for i in range(5)], 2)]
    assert sorted(asked) == sorted(expected)
    assert len(sent) == 2 and all(payload["seed"] == 7 for payload in sent)


def test_spacy_index_and_retrieval_levers_through_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "spacy.db"
    result = run("--index", str(path), "index", str(SAMPLE_CORPUS), "-e", "spacy")
    assert result.returncode == 0, result.stderr
    assert "indexed 4 documents" in result.stdout
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "Who trained Lena Sorensen?",
                                     "supporting_ids": ["people.md"]}) + "\n", encoding="utf-8")
    result = run("-i", str(path), "eval", str(questions), "-m", "hybrid", "-m", "ppr",
                 "-m", "ppr:lexical=false,link_entities=false,bridge_passages=0", "--retrieval-only",
                 "--out", str(tmp_path / "r"), "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [r["method"] for r in rows] == ["hybrid", "ppr", "ppr:lexical=false,link_entities=false,bridge_passages=0"]
    assert all(r["recall@5"] == 100.0 and r["errors"] == 0 for r in rows)
    assert "DEBUG" not in result.stderr


def test_text_that_looks_like_markup_is_printed_as_it_is(tmp_path: Path) -> None:
    """Model replies, passages, titles and ids may hold `[/INST]` or `[llm]`: printed literally, never
    read as Rich markup (a closing tag with no opening one ended the command with exit 70)."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "notes[x].md").write_text("# Title [/x] here\n\nMaria Quist [/INST] trained the [bold]pilots "
                                         "of Velden[/bold] harbour in 1890.\n", encoding="utf-8")
    index = tmp_path / "m.db"
    assert run("-i", str(index), "index", str(corpus)).returncode == 0
    listed = run("-i", str(index), "documents")
    assert listed.returncode == 0, listed.stderr
    assert "[/x]" in listed.stdout
    asked = run("-i", str(index), "ask", "Who trained the pilots of Velden?", "-m", "naive", "--trace")
    assert asked.returncode == 0, asked.stderr
    assert "Maria Quist [/INST] trained the [bold]pilots" in asked.stdout
    assert "or [llm]" in asked.stdout  # the hint that names the config section survives too
    with FakeOpenAIServer() as server:
        server.push(Behaviour(content="[/INST] Maria Quist [1] [/bold]"))
        answered = run("-i", str(index), "ask", "Who trained the pilots?", "-m", "naive",
                       env={"THINKGRAPH_LLM_BASE_URL": server.url, "THINKGRAPH_LLM_MODEL": "m"})
    assert answered.returncode == 0, answered.stderr
    assert "[/INST] Maria Quist" in answered.stdout


@pytest.mark.parametrize("form", [["--json"], []], ids=["json", "rich"])
def test_a_closed_output_pipe_ends_quietly(built_index: Path, form: list[str]) -> None:
    """`thinkgraph ask ... | head`: the reader went away; no traceback, no internal error, exit 141 (Rich's
    own handling would exit 1, the usage-error code)."""
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written
    try:
        done = subprocess.run([sys.executable, "-m", "thinkgraph", "-i", str(built_index), "ask", "Who?", *form],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=300,
                              env={**os.environ, "HF_HUB_OFFLINE": "1"})
    finally:
        os.close(write_end)
    assert done.returncode == 141 and done.stderr == ""


def test_inspect_says_why_extraction_failed(built_index: Path, tmp_path: Path) -> None:
    import shutil

    from thinkgraph.store.sqlite import SQLiteStore

    copy = tmp_path / "failed.db"
    shutil.copy(built_index, copy)
    store = SQLiteStore(copy)
    store.record_failure("extract", "people.md::0", "no valid structured reply (cut off at 1024 tokens)")
    store.close()
    human = run("-i", str(copy), "inspect", env={"COLUMNS": "250"})  # (a narrow table wraps the reason)
    assert human.returncode == 0, human.stderr
    assert "people.md::0" in human.stdout and "cut off at 1024 tokens" in human.stdout


def test_an_unexpected_eof_error_is_a_bug_not_an_interrupt(caplog: pytest.LogCaptureFixture) -> None:
    """Click turns an EOFError that reaches it into Abort, which the entry point reports as Ctrl-C
    ("interrupted", exit 130); a command's EOFError is an internal error (exit 70), with --verbose a
    traceback that names it."""
    import logging

    import typer

    from thinkgraph.cli.app import one_line_errors

    @one_line_errors
    def command() -> None:
        raise EOFError("No data left in file")

    with pytest.raises(typer.Exit) as ended:
        command()
    assert ended.value.exit_code == ExitCode.INTERNAL
    with caplog.at_level(logging.INFO, logger=""), pytest.raises(RuntimeError, match="EOFError: No data left"):
        command()


def test_the_index_report_says_how_many_community_summaries_failed(capsys: pytest.CaptureFixture[str]) -> None:
    from thinkgraph.cli.output import print_index_report
    from thinkgraph.index.report import IndexReport

    report = IndexReport(communities=5, community_levels=2, rebuilt_stages=["communities"])
    print_index_report(report)
    assert "communities: 5 in 2 levels\n" in capsys.readouterr().out.replace("; ", "\n")
    report.summary_failures = 3
    print_index_report(report)
    assert "5 in 2 levels (3 summaries failed: model-free text kept)" in " ".join(capsys.readouterr().out.split())



def test_remove_with_an_unknown_id_removes_nothing(built_index: Path) -> None:
    before = json.loads(run("--index", str(built_index), "inspect", "--json").stdout)["documents"]
    done = run("--index", str(built_index), "remove", "people.md", "nosuchdoc", "kestrel-bay.md")
    assert done.returncode == ExitCode.INPUT and done.stdout == ""
    assert done.stderr.strip() == "error: no document 'nosuchdoc' in the index; nothing removed"
    assert json.loads(run("--index", str(built_index), "inspect", "--json").stdout)["documents"] == before


def test_an_abstention_is_headed_by_its_status(built_index: Path) -> None:
    """An abstention prints "No answer (<method>, abstained)" before its reason, as a failure does."""
    outside = run("-i", str(built_index), "ask", "zymurgy fermentation yeast recipe", "-m", "a2rag")
    assert outside.returncode == 0, outside.stderr
    assert outside.stdout.startswith("No answer (a2rag, abstained)") and "out of scope" in outside.stdout
