"""The error taxonomy of KG-grounded reasoning (App. 7 of "Grounding LLM Reasoning with Knowledge
Graphs") for a wrong answer whose method reports an outcome: reached limit (the step limit ended the
run), answer found but not returned (the gold answer appears in what the reasoning saw or wrote),
and wrong reasoning (an illogical step, judged by an LLM when one is configured; without one the
remaining cases are labelled ``wrong_answer``)."""

from __future__ import annotations

import json

from pydantic import BaseModel

from thinkgraph.errors import StructuredOutputError
from thinkgraph.eval.metrics import normalize_answer
from thinkgraph.llm.service import LLM
from thinkgraph.methods.kgr.method import FINISHED_AT_LIMIT
from thinkgraph.models import Answer

REACHED_LIMIT = "reached_limit"
BUDGET_REACHED = "budget_reached"  # the method's call budget ended the run: a limit too
FOUND_NOT_RETURNED = "answer_found_not_returned"
WRONG_REASONING_STEP = "wrong_reasoning"
UNJUDGED = "wrong_answer"
MAX_TRACE_CHARS = 12_000

WRONG_REASONING = """Here is a question, its correct answer, and a model's reasoning that ended with a wrong answer.
Did the model follow an illogical or wrong reasoning step (as opposed to failing for another reason, such as
missing data)? Reply with JSON only: {{"wrong_step": true or false}}

Question: {question}
Correct answer: {gold}
Reasoning:
{trace}"""


class WrongStepVerdict(BaseModel):
    wrong_step: bool


def trace_text(answer: Answer) -> str:
    return "\n".join(json.dumps(step.outputs, ensure_ascii=False, default=str) for step in answer.trace)


def mechanical_error(answer: Answer, golds: list[str]) -> str | None:
    """The first two categories, which need no judge; None when neither applies."""
    # kgr's default answers at the step limit (ours; the paper's chain ends there without one): a wrong
    # answer given there is still one the limit cut short.
    if answer.stats.get("outcome") in (REACHED_LIMIT, BUDGET_REACHED, FINISHED_AT_LIMIT):
        return REACHED_LIMIT
    seen = f" {normalize_answer(trace_text(answer))} "
    if any(normalize_answer(g) and f" {normalize_answer(g)} " in seen for g in golds):
        return FOUND_NOT_RETURNED
    return None


async def error_type(answer: Answer, golds: list[str], llm: LLM | None) -> str:
    """The category of a wrong answer (call only for answers judged wrong)."""
    found = mechanical_error(answer, golds)
    if found is not None:
        return found
    if llm is None:
        return UNJUDGED
    prompt = WRONG_REASONING.format(question=answer.question, gold=" | ".join(golds),
                                    trace=trace_text(answer)[-MAX_TRACE_CHARS:])
    try:
        verdict = await llm.json([{"role": "user", "content": prompt}], WrongStepVerdict, step="eval.judge.taxonomy",
                               kind="verdict")
    except StructuredOutputError:
        return UNJUDGED
    return WRONG_REASONING_STEP if verdict.wrong_step else UNJUDGED
