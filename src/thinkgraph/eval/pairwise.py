"""Pairwise judging that counts every question, so that no method can raise its win rate by not
answering: an abstention, a failure or an error against an answer is a loss for the side that gave
none; two empty sides are a tie; a verdict that follows the answers' positions (inconsistent) or that
could not be read is a tie too. Each kind is counted and reported. Win rates and ELO ratings (ToG-3
App. F.3) carry bootstrap 95% intervals over the questions."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from thinkgraph.eval.datasets import Question
from thinkgraph.eval.judges import CRITERIA, Outcome, elo_rating, judge_pair
from thinkgraph.llm.service import LLM

BOOTSTRAP_SAMPLES = 2000  # resamples of the questions for the 95% intervals (ours)
BOOTSTRAP_SEED = 0
# Per question and criterion, how the pair was decided.
Kind = Literal["a", "b", "tie_inconsistent", "tie_failed", "a_only_answered", "b_only_answered", "neither_answered"]
_SCORE_A: dict[str, float] = {"a": 1.0, "a_only_answered": 1.0, "b": 0.0, "b_only_answered": 0.0,
                              "tie_inconsistent": 0.5, "tie_failed": 0.5, "neither_answered": 0.5}


@dataclass
class QuestionPair:
    """One question of a method (a) against the reference (b)."""

    qid: str
    kinds: dict[str, Kind]
    explanations: dict[str, dict[str, str]] = field(default_factory=dict)


def answered(record: Mapping[str, Any] | None) -> str | None:
    """The text a record answered with, or None for an abstention, failure, error or missing record."""
    if not record or record.get("status") != "answered":
        return None
    text = str(record.get("answer") or "").strip()
    return text or None


def _kinds_from(outcomes: Mapping[str, Outcome]) -> dict[str, Kind]:
    table: dict[str, Kind] = {"a": "a", "b": "b", "inconsistent": "tie_inconsistent", "failed": "tie_failed"}
    return {c: table[outcomes[c]] for c in CRITERIA}


async def judge_question(llm: LLM, question: Question, mine: Mapping[str, Any] | None,
                         reference: Mapping[str, Any] | None) -> QuestionPair:
    a, b = answered(mine), answered(reference)
    if a is not None and b is not None:
        judgement = await judge_pair(llm, question.question, a, b)
        return QuestionPair(question.id, _kinds_from(judgement.outcomes), judgement.explanations)
    kind: Kind = "a_only_answered" if a is not None else "b_only_answered" if b is not None else "neither_answered"
    return QuestionPair(question.id, dict.fromkeys(CRITERIA, kind))


def bootstrap_interval(scores: Sequence[float], samples: int = BOOTSTRAP_SAMPLES,
                       seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of the mean over resamples of the questions."""
    values = np.asarray(scores, dtype=np.float64)
    if len(values) == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(samples, len(values)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def criterion_summary(pairs: Sequence[QuestionPair], criterion: str) -> dict[str, Any]:
    """Win rate over every question (ties at one half), its interval, the ELO of both, the counts."""
    scores = [_SCORE_A[p.kinds[criterion]] for p in pairs]
    counts = Counter(p.kinds[criterion] for p in pairs)
    if not scores:
        return {"win_rate": None, "win_rate_ci95": None, "elo": None, "elo_ci95": None,
                "counts": dict(counts), "inconsistent": 0, "failed": 0}
    rate = float(np.mean(scores))
    low, high = bootstrap_interval(scores)
    return {"win_rate": rate, "win_rate_ci95": [low, high], "elo": elo_rating(rate),
            "elo_ci95": [elo_rating(low), elo_rating(high)], "counts": dict(sorted(counts.items())),
            "inconsistent": counts["tie_inconsistent"], "failed": counts["tie_failed"]}


def load_records(records_file: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """label -> qid -> record (the last one, as a resumed run appends)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for line in records_file.read_text(encoding="utf-8").splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        out.setdefault(r["label"], {})[r["qid"]] = r
    return out


async def compare(llm: LLM, questions: Sequence[Question], records: Mapping[str, Mapping[str, Mapping[str, Any]]],
                  reference: str, labels: Sequence[str]) -> dict[str, Any]:
    """Each label against ``reference`` on every question of the set."""
    result: dict[str, Any] = {"reference": reference, "methods": {}}
    ref = records.get(reference, {})
    for label in labels:
        if label == reference:
            continue
        mine = records.get(label, {})
        pairs = [await judge_question(llm, q, mine.get(q.id), ref.get(q.id)) for q in questions]
        result["methods"][label] = {
            "pairs": len(pairs), "judged": sum(p.kinds[CRITERIA[0]] in ("a", "b", "tie_inconsistent", "tie_failed")
                                               for p in pairs),
            "criteria": {c: criterion_summary(pairs, c) for c in CRITERIA},
            "questions": [asdict(p) for p in pairs]}
    return result
