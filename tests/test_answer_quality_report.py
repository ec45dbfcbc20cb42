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


def test_the_table_pairs_each_method_with_ppr_on_its_own_questions(tmp_path: Path) -> None:
    data = tmp_path / "data" / "musique"
    data.mkdir(parents=True)
    (data / "questions_dev.jsonl").write_text("\n".join(json.dumps(
        {"id": f"q{i}", "question": f"Q{i}?", "answer": "A", "supporting_ids": [f"d{i}", "x"]}) for i in range(3)))
    out = tmp_path / "out" / "musique"
    out.mkdir(parents=True)
    (out / "records.jsonl").write_text("\n".join([
        _record("ppr", "q0", 1.0, "answered", ["d0", "x"], 1), _record("ppr", "q1", 0.0, "answered", ["d1"], 1),
        _record("ppr", "q2", 0.5, "answered", [], 1),
        _record("tog3", "q0", 0.0, "abstained", ["d0"], 4), _record("tog3", "q1", 0.0, "failed", [], 6, failures=2),
        "{not json"]) + "\n")
    args = argparse.Namespace(datasets="musique", out=tmp_path / "out", data=tmp_path / "data", questions=3)
    table = answer_quality.report(args)
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in table.splitlines()
            if line.startswith("| ppr") or line.startswith("| tog3")}
    assert rows["ppr"][1:5] == ["3", "33.3", "50.0", "50.0"]  # n, EM, F1, ppr's F1 on the same questions
    assert rows["ppr"][5] == "50.0"  # cited R@5: (1 + 0.5 + 0) / 3
    assert rows["tog3"][1:5] == ["2", "0.0", "0.0", "50.0"]  # ppr scored 1.0 and 0.0 on tog3's two questions
    assert rows["tog3"][6] == "0 / 1 / 1 / 0 / 0" and rows["tog3"][7] == "20.0"  # 2 unusable of 10 calls
    assert rows["tog3"][8] == "5"  # median calls


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
    args = argparse.Namespace(datasets="musique", out=tmp_path / "out", data=tmp_path / "data", questions=1)
    table = answer_quality.report(args)
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in table.splitlines() if line.startswith("| ")}
    assert rows["a2rag:triple_check=off"][8] == "2 (2 cached)" and rows["ppr"][8] == "1"
    assert "tokens and seconds count only the calls sent to the model" in table


def test_a_report_of_an_empty_out_says_where_the_measured_records_are(tmp_path: Path) -> None:
    import pytest

    data = tmp_path / "data" / "musique"
    data.mkdir(parents=True)
    (data / "questions_dev.jsonl").write_text(json.dumps({"id": "q0", "question": "Q?", "answer": "A"}) + "\n")
    args = argparse.Namespace(datasets="musique", out=tmp_path / "nothing", data=tmp_path / "data", questions=3)
    with pytest.raises(answer_quality.NoRecordsError, match="benchmarks/results/answer_quality"):
        answer_quality.report(args)
