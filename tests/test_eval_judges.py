"""Judges with the scripted LLM, win rates, and ELO numbers from ToG-3 App. F.3's formula."""

from __future__ import annotations

import json

import pytest

from thinkgraph.config import LLMSettings
from thinkgraph.eval.judges import (
    WinRates,
    elo_rating,
    elo_win_probability,
    judge_correct,
    judge_pair,
)
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
        return json.dumps({"comprehensiveness": better, "diversity": 1, "empowerment": better, "overall": better})

    judge = llm(**{"Compare two answers": verdict})
    outcome = await judge_pair(judge, "q", "LONG answer", "SHORT answer")
    assert outcome == {"comprehensiveness": "a", "diversity": "inconsistent", "empowerment": "a", "overall": "a"}
    requests = judge.backend.requests
    assert len(requests) == 2 and requests[0].messages[0]["content"] != requests[1].messages[0]["content"]


def test_win_rates_exclude_inconsistent_verdicts() -> None:
    outcomes = [{"comprehensiveness": "a", "diversity": "b", "empowerment": "inconsistent", "overall": "a"},
                {"comprehensiveness": "a", "diversity": "inconsistent", "empowerment": "inconsistent", "overall": "b"},
                {"comprehensiveness": "b", "diversity": "failed", "empowerment": "inconsistent", "overall": "a"}]
    rates = WinRates.from_outcomes(outcomes)
    assert rates.rate_a("comprehensiveness") == pytest.approx(2 / 3)
    assert rates.rate_a("diversity") == 0.0 and rates.inconsistent["diversity"] == 1
    assert rates.rate_a("empowerment") is None and rates.inconsistent["empowerment"] == 3
    assert rates.failed["diversity"] == 1 and rates.rate_a("overall") == pytest.approx(2 / 3)
