"""The answer-quality benchmark's table (benchmarks/answer_quality.py report) from records the test
writes: means, cited Recall@5, statuses, unusable replies per 100 calls, medians of cost, and ppr's F1
on the same questions beside a method measured on fewer."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from support import load_benchmark

answer_quality = load_benchmark("answer_quality")


def _record(label: str, qid: str, f1: float, status: str, cited: list[str], calls: int, failures: int = 0) -> str:
    return json.dumps({"label": label, "qid": qid, "status": status, "cited": cited,
                       "metrics": {"em": float(f1 == 1.0), "f1": f1},
                       "cost": {"calls": calls, "prompt_tokens": 100 * calls, "completion_tokens": 10, "seconds": 2.0},
                       "llm": {"repairs": 0, "parse_failures": failures}})


def read(line: str, tokens: int = 40) -> str:
    """A record whose server reported the prompt tokens it evaluated."""
    record = json.loads(line)
    record["cost"]["prompt_tokens_read"] = tokens
    return json.dumps(record)


def test_the_table_pairs_each_method_with_ppr_on_its_own_questions(tmp_path: Path) -> None:
    data = tmp_path / "data" / "musique"
    data.mkdir(parents=True)
    (data / "questions_dev.jsonl").write_text("\n".join(json.dumps(
        {"id": f"q{i}", "question": f"Q{i}?", "answer": "A", "supporting_ids": [f"d{i}", "x"]}) for i in range(3)))
    out = tmp_path / "out" / "musique"
    out.mkdir(parents=True)
    (out / "records.jsonl").write_text("\n".join([
        read(_record("ppr", "q0", 1.0, "answered", ["d0", "x"], 1)),
        read(_record("ppr", "q1", 0.0, "answered", ["d1"], 1)), read(_record("ppr", "q2", 0.5, "answered", [], 1)),
        _record("tog3", "q0", 0.0, "abstained", ["d0"], 4), _record("tog3", "q1", 0.0, "failed", [], 6, failures=2),
        "{not json"]) + "\n")
    args = argparse.Namespace(datasets=["musique"], out=tmp_path / "out", data=tmp_path / "data", questions=3)
    table = answer_quality.report(args)
    table, paired = table.split("\nPaired with", 1)
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in table.splitlines()
            if line.startswith("| ppr") or line.startswith("| tog3")}
    # the paired table: tog3 lost q0 to ppr (0.0 against 1.0) and tied q1; it abstained once
    assert "| tog3 | 2 | 0 / 1 | – | 0 | – | – | 0 | 0 | 1 (0) | – |" in paired  # no corpus here: not shown is –
    assert rows["ppr"][1:5] == ["3", "33.3", "50.0", "50.0"]  # n, EM, F1, ppr's F1 on the same questions
    assert rows["ppr"][5] == "50.0"  # cited R@5: (1 + 0.5 + 0) / 3
    assert rows["tog3"][1:5] == ["2", "0.0", "0.0", "50.0"]  # ppr scored 1.0 and 0.0 on tog3's two questions
    assert rows["tog3"][6] == "0 / 1 / 1 / 0 / 0" and rows["tog3"][7] == "20.0"  # 2 unusable of 10 calls
    assert rows["tog3"][8] == "5"  # median calls
    assert rows["tog3"][9] == "500" and rows["ppr"][9] == "100 (40)"  # sent, and read where the server says


def test_calls_the_llm_cache_answered_count_as_calls_and_are_marked(tmp_path: Path) -> None:
    """A row whose prompts an earlier row had asked (an ablation sharing its drafts) shows the method's
    calls with how many the cache answered, and a note that tokens and seconds leave those out."""
    data = tmp_path / "data" / "musique"
    data.mkdir(parents=True)
    (data / "questions_dev.jsonl").write_text(json.dumps({"id": "q0", "question": "Q?", "answer": "A"}))
    out = tmp_path / "out" / "musique"
    out.mkdir(parents=True)
    cached = json.loads(_record("a2rag:triple_check=off", "q0", 1.0, "answered", [], 0))
    cached["cost"]["cached_calls"] = 2
    (out / "records.jsonl").write_text(_record("ppr", "q0", 1.0, "answered", [], 1) + "\n" + json.dumps(cached) + "\n")
    args = argparse.Namespace(datasets=["musique"], out=tmp_path / "out", data=tmp_path / "data", questions=1)
    table = answer_quality.report(args)
    first = table.split("\nPaired with", 1)[0]
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in first.splitlines() if line.startswith("| ")}
    assert rows["a2rag:triple_check=off"][8] == "2 (2 cached)" and rows["ppr"][8] == "1"
    assert "tokens and seconds count only the calls sent to the model" in table


def test_a_report_of_an_empty_out_says_where_the_measured_records_are(tmp_path: Path) -> None:
    import pytest

    data = tmp_path / "data" / "musique"
    data.mkdir(parents=True)
    (data / "questions_dev.jsonl").write_text(json.dumps({"id": "q0", "question": "Q?", "answer": "A"}) + "\n")
    args = argparse.Namespace(datasets=["musique"], out=tmp_path / "nothing", data=tmp_path / "data", questions=3)
    with pytest.raises(answer_quality.NoRecordsError, match="benchmarks/results/answer_quality"):
        answer_quality.report(args)


def test_a_median_between_two_counts_is_shown_as_measured() -> None:
    assert answer_quality.median_text(7.5) == "7.5" and answer_quality.median_text(8.0) == "8"


def test_an_unknown_dataset_is_a_one_line_usage_error() -> None:
    import subprocess
    import sys

    script = Path(answer_quality.__file__)
    run = subprocess.run([sys.executable, str(script), "report", "--datasets", "musique,nosuch"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "unknown dataset(s) nosuch; known: musique, hotpotqa" in run.stderr.strip().splitlines()[-1]


def test_a_reader_that_leaves_ends_the_report_quietly(tmp_path: Path) -> None:
    """`report | head -3`: the pipe closes before the table is written; exit 141, no traceback."""
    import subprocess
    import sys

    data = tmp_path / "data" / "musique"
    data.mkdir(parents=True)
    (data / "questions_dev.jsonl").write_text(json.dumps({"id": "q0", "question": "Q?", "answer": "A"}) + "\n")
    (tmp_path / "out" / "musique").mkdir(parents=True)
    (tmp_path / "out" / "musique" / "records.jsonl").write_text(_record("ppr", "q0", 1.0, "answered", [], 1) + "\n")
    child = subprocess.Popen([sys.executable, str(Path(answer_quality.__file__)), "report", "--datasets", "musique",
                              "--data", str(tmp_path / "data"), "--out", str(tmp_path / "out")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # the reader is gone before anything is written
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=120) == 141 and "Traceback" not in stderr and "BrokenPipe" not in stderr


def test_the_report_says_the_load_before_the_first_question_and_at_the_end(tmp_path: Path) -> None:
    data = tmp_path / "data" / "musique"
    data.mkdir(parents=True)
    (data / "questions_dev.jsonl").write_text(json.dumps({"id": "q0", "question": "Q?", "answer": "A"}))
    out = tmp_path / "out"
    (out / "musique").mkdir(parents=True)
    (out / "musique" / "records.jsonl").write_text(_record("ppr", "q0", 1.0, "answered", [], 1) + "\n")
    (out / "meta.json").write_text(json.dumps({"model": "m", "commit": "abc", "date": "2026-11-28", "cores": 2,
                                               "load_average": [2.0, 1.5, 1.0],
                                               "load_average_at_start": [0.1, 0.2, 0.3]}))
    args = argparse.Namespace(datasets=["musique"], out=out, data=tmp_path / "data", questions=1)
    assert answer_quality.report(args).endswith(
        "load average at the end 2.00, 1.50, 1.00; before the first question 0.10, 0.20, 0.30")
