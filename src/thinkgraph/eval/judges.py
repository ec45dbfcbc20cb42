"""LLM judges: a correctness judge (GPT4Score-style) and a pairwise judge on comprehensiveness,
diversity, empowerment and overall that asks both answer orders and counts a win only when the two
verdicts agree; win rates, and the ELO conversion of ToG-3 App. F.3."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, field_validator

from thinkgraph.errors import StructuredOutputError
from thinkgraph.llm.service import LLM

CRITERIA = ("comprehensiveness", "diversity", "empowerment", "overall")
ELO_REFERENCE_RATING = 1600.0  # R_ref of ToG-3 App. F.3

CORRECTNESS_PROMPT = """Decide whether the predicted answer means the same as the gold answer for the
question (wording may differ; extra correct detail is fine; a different or missing fact is wrong).
Reply with JSON only: {{"correct": true or false}}

Question: {question}
Gold answer: {gold}
Predicted answer: {prediction}"""

PAIRWISE_PROMPT = """Compare two answers to the question on four criteria:
- comprehensiveness: how much detail it gives to cover all aspects of the question;
- diversity: how varied its perspectives and insights are;
- empowerment: how well it helps the reader understand the topic and make informed judgements;
- overall: the best answer considering the three criteria together.
For each criterion name the better answer, 1 or 2, and explain the choice in one sentence.
Reply with JSON only: {{"comprehensiveness": {{"winner": 1 or 2, "explanation": "..."}},
"diversity": {{"winner": 1 or 2, "explanation": "..."}}, "empowerment": {{"winner": 1 or 2, "explanation": "..."}},
"overall": {{"winner": 1 or 2, "explanation": "..."}}}}

Question: {question}

Answer 1:
{first}

Answer 2:
{second}"""


class CorrectnessVerdict(BaseModel):
    correct: bool


class CriterionVerdict(BaseModel):
    """One criterion's winner and why (ToG-3 Fig. 17 asks for the explanation)."""

    winner: Literal[1, 2]
    explanation: str = ""

    @field_validator("winner", mode="before")
    @classmethod
    def _answer_number(cls, value: object) -> object:
        """"Answer 2", "2" or 2: models name the winner in several ways."""
        if isinstance(value, str) and (digits := re.findall(r"[12]", value)):
            return int(digits[-1])
        return value


class PairwiseVerdict(BaseModel):
    comprehensiveness: CriterionVerdict
    diversity: CriterionVerdict
    empowerment: CriterionVerdict
    overall: CriterionVerdict


async def judge_correct(llm: LLM, question: str, golds: list[str], prediction: str | None) -> float | None:
    """1.0 / 0.0, or None when the judge's reply could not be parsed (counted by the LLM layer)."""
    if not prediction or not golds:
        return 0.0
    prompt = CORRECTNESS_PROMPT.format(question=question, gold=" | ".join(golds), prediction=prediction)
    try:
        verdict = await llm.json([{"role": "user", "content": prompt}], CorrectnessVerdict, step="eval.judge.correct",
                               kind="verdict")
    except StructuredOutputError:
        return None
    return float(verdict.correct)


Outcome = Literal["a", "b", "inconsistent", "failed"]


@dataclass
class PairJudgement:
    """Per criterion the outcome, and the judge's explanations in each order ("a_first": answer a was
    shown as answer 1)."""

    outcomes: dict[str, Outcome]
    explanations: dict[str, dict[str, str]] = field(default_factory=dict)


async def judge_pair(llm: LLM, question: str, answer_a: str, answer_b: str) -> PairJudgement:
    """Per criterion: "a" or "b" when both orders agree, "inconsistent" when the verdict follows the
    position (position bias), "failed" when a reply could not be parsed."""
    async def ask(first: str, second: str) -> PairwiseVerdict | None:
        prompt = PAIRWISE_PROMPT.format(question=question, first=first, second=second)
        try:
            return await llm.json([{"role": "user", "content": prompt}], PairwiseVerdict, step="eval.judge.pairwise",
                                  kind="verdict")
        except StructuredOutputError:
            return None

    forward, backward = await ask(answer_a, answer_b), await ask(answer_b, answer_a)
    out: dict[str, Outcome] = {}
    for criterion in CRITERIA:
        if forward is None or backward is None:
            out[criterion] = "failed"
            continue
        first_pick: Outcome = "a" if getattr(forward, criterion).winner == 1 else "b"
        second_pick: Outcome = "b" if getattr(backward, criterion).winner == 1 else "a"
        out[criterion] = first_pick if first_pick == second_pick else "inconsistent"
    explanations = {order: {c: getattr(v, c).explanation for c in CRITERIA}
                    for order, v in (("a_first", forward), ("b_first", backward)) if v is not None}
    return PairJudgement(out, explanations)


def elo_rating(win_rate: float, reference_rating: float = ELO_REFERENCE_RATING) -> float:
    """R_i = R_ref - 400 log10(1/w_i - 1), w_i the win rate of method i against the reference.
    Win rates of exactly 0 or 1 have no finite rating; they are clipped to [0.001, 0.999]."""
    w = min(max(win_rate, 0.001), 0.999)
    return reference_rating - 400.0 * math.log10(1.0 / w - 1.0)


def elo_win_probability(rating_i: float, rating_j: float) -> float:
    """P(i beats j) = 1 / (1 + 10^((R_j - R_i) / 400))."""
    return float(1.0 / (1.0 + 10.0 ** ((rating_j - rating_i) / 400.0)))
