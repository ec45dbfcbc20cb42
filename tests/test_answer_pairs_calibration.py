"""The paired columns of the answer-quality report (both evidences holding gold, wins and losses,
abstentions with gold, ircot's first-step stops), the verdict log evaluation records keep, and the
calibration of a verdict's P(yes) threshold from it."""

from __future__ import annotations

import pytest

from support import load_benchmark
from thinkgraph.eval.verdicts import verdict_log
from thinkgraph.models import Answer, AnswerStatus, TraceStep

pairs = load_benchmark("answer_pairs")
calibrate = load_benchmark("calibrate_verdicts")
GOLD = {"q0": ["g0"], "q1": ["g1"], "q2": ["g2"]}


def record(label: str, qid: str, f1: float, retrieved: list[str], status: str = "answered",
           steps: int | None = None) -> dict:
    method = label.split(":")[0]
    return {"label": label, "method": method, "qid": qid, "status": status, "retrieved": retrieved,
            "metrics": {"f1": f1}, "stats": {} if steps is None else {"steps": steps}}


def test_the_paired_row_counts_what_each_column_says() -> None:
    baseline = {r["qid"]: r for r in [record("ppr", "q0", 1.0, ["g0"]), record("ppr", "q1", 0.5, ["g1"]),
                                      record("ppr", "q2", 0.0, ["x"])]}
    mine = [record("a2rag", "q0", 0.0, ["g0"], "abstained"), record("a2rag", "q1", 1.0, ["g1", "y"]),
            record("a2rag", "q2", 0.5, ["g2"])]
    row = pairs.paired_row("a2rag", mine, baseline, GOLD)
    assert (row["paired"], row["wins"], row["losses"]) == (3, 2, 1)
    assert row["both_gold"] == 2 and row["f1_both"] == pytest.approx(50.0) and row["baseline_f1_both"] == 75.0
    assert (row["abstained"], row["abstained_with_gold"]) == (1, 1) and row["first_step_stops"] is None
    ircot = [record("ircot", "q0", 1.0, ["g0"], steps=1), record("ircot", "q1", 1.0, ["g1"], steps=3)]
    assert pairs.paired_row("ircot", ircot, baseline, GOLD)["first_step_stops"] == 1
    table = pairs.paired_table([*baseline.values(), *mine], GOLD)
    assert any(line.startswith("| a2rag | 3 | 2 / 1 | – | 2 | 50.0 | 75.0 | 2: 50.0 (75.0) | 0 | 1 (1) | – |")
               for line in table)


def test_every_hop_splits_the_questions_by_whether_the_method_reached_each_gold_passage() -> None:
    gold = {"q0": ["a", "b"], "q1": ["c", "d"], "q2": ["e", "f"]}
    baseline = {r["qid"]: r for r in [record("ppr", "q0", 1.0, ["a", "b"]), record("ppr", "q1", 0.5, ["c", "d", "x"]),
                                      record("ppr", "q2", 0.0, ["e"])]}
    mine = [record("tog3", "q0", 0.5, ["b", "a"]), record("tog3", "q1", 0.0, ["c"]),  # the second hop missed
            record("tog3", "q2", 1.0, ["e", "f"])]  # every hop, where ppr's lacked one: in neither split
    row = pairs.paired_row("tog3", mine, baseline, gold)
    deep = record("topg", "q0", 0.0, ["x1", "a", "x2", "x3", "x4", "b"])  # the second hop below its top 5
    assert not pairs.holds_every_hop(deep, gold["q0"]) and pairs.holds_every_hop(deep, gold["q0"], depth=6)
    assert (row["every_hop"], row["f1_every"], row["baseline_f1_every"]) == (1, 50.0, 100.0)
    assert (row["hop_missed"], row["f1_missed"], row["baseline_f1_missed"]) == (1, 0.0, 50.0)
    assert row["both_gold"] == 3


def test_a_loss_whose_top_5_lacks_the_answer_ppr_showed_is_counted_as_not_shown() -> None:
    texts = pairs.AnswerTexts({"q0": ["Los Angeles Dodgers", "Dodgers"], "q1": ["1817"]},
                              {"g0": "The Dodgers won.", "g1": "It joined in 1817.", "h": "The Astros lost.",
                               "a": "The Los Angeles Dodgersfans."})  # a word's prefix is not the answer
    baseline = {"q0": record("ppr", "q0", 1.0, ["h", "g0"]), "q1": record("ppr", "q1", 1.0, ["g1"])}
    mine = [record("topg", "q0", 0.0, ["h", "a"]), record("topg", "q1", 0.0, ["g1"])]
    assert texts.shown(baseline["q0"]) and not texts.shown(mine[0]) and texts.shown(mine[1])
    assert not texts.shown(record("ppr", "q0", 1.0, ["h", "h", "h", "h", "h", "g0"]))  # past the top 5
    row = pairs.paired_row("topg", mine, baseline, GOLD, texts)
    assert (row["losses"], row["lost_unshown"]) == (2, 1)
    table = pairs.paired_table([*baseline.values(), *mine], GOLD, texts)
    assert any(line.startswith("| topg | 2 | 0 / 2 | 1 |") for line in table)


def test_each_row_is_compared_with_its_earlier_self_on_the_same_questions() -> None:
    before = [record("a2rag", "q0", 0.0, []), record("a2rag", "q1", 1.0, []), record("ppr", "q0", 1.0, [])]
    now = [record("a2rag", "q0", 1.0, []), record("a2rag", "q1", 0.5, []), record("a2rag", "q2", 1.0, []),
           record("topg", "q0", 1.0, [])]
    lines = pairs.before_after(now, before)
    assert "| a2rag | 2 | 50.0 | 75.0 | 1 / 1 |" in lines and not any(line.startswith("| topg") for line in lines)


def test_the_verdict_log_keeps_each_p_yes_with_the_answer_it_judged() -> None:
    trace = [TraceStep("responder", "a2rag.answer", {}, {"reply": "Asks for: a place\nAnswer: Rivertown [1]"}),
             TraceStep("verifier", "check", {}, {"p_yes": {"rel": 0.9, "grd": 0.2}, "written": {"rel": "yes",
                                                                                               "grd": "yes"}}),
             TraceStep("reflector", "sufficiency", {}, {"reward": 0})]  # no P(yes): not logged
    log = verdict_log(Answer(question="q", method="a2rag", text=None, status=AnswerStatus.ABSTAINED, trace=trace))
    assert [(v["field"], v["p_yes"], v["written"]) for v in log] == [("rel", 0.9, "yes"), ("grd", 0.2, "yes")]
    assert log[0]["judged"].endswith("Rivertown [1]") and calibrate.answer_of(log[0]["judged"]) == "Rivertown"


def test_calibration_labels_each_verdict_by_its_judged_answer_and_picks_the_separating_threshold() -> None:
    golds = {"q0": ["Rivertown"], "q1": ["Paris"]}
    records = [{"method": "a2rag", "qid": "q0", "answer": None, "verdicts": [
                   {"step": "check", "field": "grd", "p_yes": 0.7, "written": "yes", "judged": "Answer: Rivertown"}]},
               {"method": "a2rag", "qid": "q1", "answer": None, "verdicts": [
                   {"step": "check", "field": "grd", "p_yes": 0.4, "written": "yes", "judged": "Answer: Lyon"},
                   {"step": "check", "field": "rel", "p_yes": None, "written": "yes", "judged": "Answer: Lyon"}]}]
    groups = calibrate.points(records, golds, 0.5)
    assert groups == {"a2rag check.grd": [(0.7, True, True), (0.4, False, True)]}
    lines, chosen = calibrate.curve(groups["a2rag check.grd"])
    assert 0.4 < chosen <= 0.7 and len(lines) == len(calibrate.THRESHOLDS)
    assert "| 0.50 | 100 | 100 | 0 |" in lines  # at 0.5 the right draft passes and the wrong one fails
