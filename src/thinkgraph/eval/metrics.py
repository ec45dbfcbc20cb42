"""Answer and retrieval metrics: exact match (strict, and the substring form ToG-3 uses), token F1
with precision and recall, Recall@k of gold passages, Rouge-L. SQuAD-style normalisation; every
answer metric takes the best over the gold answer and its aliases."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower case, no punctuation, no articles (a, an, the), single spaces."""
    text = (text or "").lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str | None, golds: Sequence[str]) -> float:
    pred = normalize_answer(prediction or "")
    return float(any(pred == normalize_answer(g) for g in golds if normalize_answer(g)))


def substring_match(prediction: str | None, golds: Sequence[str]) -> float:
    """1 when a normalised gold answer occurs in the normalised response (ToG-3's EM)."""
    pred = f" {normalize_answer(prediction or '')} "
    return float(any(f" {normalize_answer(g)} " in pred for g in golds if normalize_answer(g)))


@dataclass(frozen=True, slots=True)
class F1:
    f1: float
    precision: float
    recall: float


def token_f1(prediction: str | None, golds: Sequence[str]) -> F1:
    """Token-overlap F1 (with precision and recall) against the best-matching gold answer."""
    best = F1(0.0, 0.0, 0.0)
    pred_tokens = normalize_answer(prediction or "").split()
    for gold in golds:
        gold_tokens = normalize_answer(gold).split()
        common = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
        if not pred_tokens or not gold_tokens or common == 0:
            continue
        p, r = common / len(pred_tokens), common / len(gold_tokens)
        score = F1(2 * p * r / (p + r), p, r)
        if score.f1 > best.f1:
            best = score
    return best


def recall_at_k(retrieved: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Share of gold passages among the first k retrieved (repeats ignored), as HippoRAG reports it."""
    if not gold:
        return 0.0
    top = list(dict.fromkeys(retrieved))[:k]
    return len(set(top) & set(gold)) / len(set(gold))


@lru_cache(maxsize=1)
def _rouge() -> Any:  # (rouge_score has no types)
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


def rouge_l(prediction: str | None, golds: Sequence[str]) -> float:
    if not prediction:
        return 0.0
    return max((_rouge().score(g, prediction)["rougeL"].fmeasure for g in golds if g), default=0.0)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100]); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, int(-(-q / 100 * len(ordered) // 1)))
    return ordered[min(rank, len(ordered)) - 1]
