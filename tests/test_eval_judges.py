"""Judges with the scripted LLM, win rates, and ELO numbers from ToG-3 App. F.3's formula."""

from __future__ import annotations

import json

import pytest

from thinkgraph.config import LLMSettings
from thinkgraph.eval.datasets import Question
from thinkgraph.eval.judges import CRITERIA, elo_rating, elo_win_probability, judge_correct, judge_pair
from thinkgraph.eval.pairwise import bootstrap_interval, compare
from thinkgraph.llm.backend import ChatRequest
from thinkgraph.llm.service import LLM
from thinkgraph.testing import ScriptedBackend


def llm(*replies: object, **rules: object) -> LLM:
    return LLM(ScriptedBackend(script=list(replies), rules=list(rules.items())), settings=LLMSettings(model="j"))


def test_elo_from_the_paper_formula() -> None:
    assert elo_rating(0.5) == pytest.approx(1600.0)
    # NaiveRAG's 28.4% against ToG-3 (App. F Table 6): 1600 - 400 log10(1/0.284 - 1) = 1439.4
    assert elo_rating(0.284) == pytest.approx(1600 - 400 * 0.40158, abs=0.05)
    assert elo_rating(0.716) == pytest.approx(1600 + 400 * 0.40158, abs=0.05)
    assert elo_win_probability(1439.4, 1600.0) == pytest.approx(0.284, abs=1e-3)
    assert elo_win_probability(1600, 1600) == 0.5
    assert elo_rating(1.0) == pytest.approx(1600 + 400 * 2.99957, abs=0.1)  # clipped, finite


async def test_correctness_judge() -> None:
    judge = llm('{"correct": true}', "no idea", "still no", "nope")
    assert await judge_correct(judge, "q", ["Paris"], "It is Paris") == 1.0
    assert await judge_correct(judge, "q", ["Paris"], "Lyon") is None  # unparseable after repairs
    assert await judge_correct(judge, "q", ["Paris"], None) == 0.0  # an empty answer is wrong, no call


async def test_pairwise_asks_both_orders_and_detects_position_bias() -> None:
    def verdict(request: ChatRequest) -> str:
        prompt = request.messages[0]["content"]
        first_is_long = prompt.index("LONG") < prompt.index("SHORT")
        better = 1 if first_is_long else 2  # "LONG" is better on every criterion but diversity
        picks = {"comprehensiveness": better, "diversity": 1, "empowerment": f"Answer {better}", "overall": better}
        return json.dumps({c: {"winner": w, "explanation": f"{c} goes to {w}"} for c, w in picks.items()})

    judge = llm(**{"Compare two answers": verdict})
    judged = await judge_pair(judge, "q", "LONG answer", "SHORT answer")
    assert judged.outcomes == {"comprehensiveness": "a", "diversity": "inconsistent", "empowerment": "a",
                               "overall": "a"}
    assert judged.explanations["a_first"]["overall"] == "overall goes to 1"  # Fig. 17: kept per criterion
    assert judged.explanations["b_first"]["overall"] == "overall goes to 2"
    requests = judge.backend.requests
    assert len(requests) == 2 and requests[0].messages[0]["content"] != requests[1].messages[0]["content"]


def _records(label: str, answers: dict[str, str | None]) -> dict[str, dict]:
    return {qid: {"label": label, "qid": qid, "status": "answered" if text else "abstained", "answer": text}
            for qid, text in answers.items()}


QUESTIONS = [Question(id=f"q{i}", question=f"question {i}") for i in range(1, 7)]


def _judge_by_name() -> LLM:
    """Prefers the answer that says GOOD on every criterion, in both orders."""
    def verdict(request: ChatRequest) -> str:
        prompt = request.messages[0]["content"]
        first = prompt.split("Answer 1:", 1)[1].split("Answer 2:", 1)[0]
        return json.dumps({c: {"winner": 1 if "GOOD" in first else 2, "explanation": "x"} for c in CRITERIA})
    return llm(**{"Compare two answers": verdict})


async def test_a_method_that_abstains_cannot_raise_its_win_rate_by_abstaining() -> None:
    # the reference is beaten on q1-q3 and wins q4-q6, where the other method answers badly
    reference = _records("ref", {q.id: "plain answer" if q.id in ("q1", "q2", "q3") else "GOOD reference"
                                 for q in QUESTIONS})
    answers_all = {"q1": "GOOD", "q2": "GOOD", "q3": "GOOD", "q4": "weak", "q5": "weak", "q6": "weak"}
    declines_the_hard_ones = {**answers_all, "q4": None, "q5": None, "q6": None}
    records = {"ref": reference, "all": _records("all", answers_all),
               "abstains": _records("abstains", declines_the_hard_ones)}
    result = await compare(_judge_by_name(), QUESTIONS, records, "ref", ["all", "abstains"])
    everything = result["methods"]["all"]["criteria"]["overall"]
    abstaining = result["methods"]["abstains"]["criteria"]["overall"]
    assert everything["win_rate"] == pytest.approx(0.5) and abstaining["win_rate"] == pytest.approx(0.5)
    assert abstaining["counts"] == {"a": 3, "b_only_answered": 3}  # the three it declined are losses
    assert result["methods"]["abstains"]["pairs"] == 6 and result["methods"]["abstains"]["judged"] == 3


async def test_ties_count_one_half_and_each_kind_is_counted() -> None:
    def verdict(request: ChatRequest) -> str:  # always "the first one": position bias, never a real win
        return json.dumps({c: {"winner": 1, "explanation": "first"} for c in CRITERIA})

    records = {"ref": _records("ref", {"q1": "x", "q2": "y", "q3": None}),
               "m": _records("m", {"q1": "u", "q2": None, "q3": None})}
    result = await compare(llm(**{"Compare two answers": verdict}), QUESTIONS[:3], records, "ref", ["m"])
    overall = result["methods"]["m"]["criteria"]["overall"]
    assert overall["counts"] == {"b_only_answered": 1, "neither_answered": 1, "tie_inconsistent": 1}
    assert overall["win_rate"] == pytest.approx((0.5 + 0 + 0.5) / 3) and overall["inconsistent"] == 1
    low, high = overall["win_rate_ci95"]
    assert 0.0 <= low <= overall["win_rate"] <= high <= 1.0 and overall["elo_ci95"][0] <= overall["elo"]
    question = result["methods"]["m"]["questions"][0]
    assert question["qid"] == "q1" and question["explanations"]["a_first"]["overall"] == "first"


def test_bootstrap_interval_brackets_the_mean_and_narrows_with_more_questions() -> None:
    few, many = [1.0, 0.0] * 10, [1.0, 0.0] * 500
    (a, b), (c, d) = bootstrap_interval(few), bootstrap_interval(many)
    assert a < 0.5 < b and c < 0.5 < d and (d - c) < (b - a) / 3
