"""Yes/no judgements a small model gets right: the reason written first and the verdict last, the
verdict constrained to "yes" or "no" by the server's structured output (the schema's property order is
the order the grammar writes), and read as P(yes) from the verdict token's log-probabilities where the
server returns them. A verdict written before its reason is a guess the reason then defends; a verdict
read as a probability can be held to a threshold calibrated per judgement
(benchmarks/calibrate_verdicts.py), where the written token is a coin with the threshold fixed at 0.5.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

YesNo = Literal["yes", "no"]
TOP_LOGPROBS = 10  # alternatives asked for per token: "yes"/"no" in their spellings fit well within 10
REASON_CHARS = 400  # a reason longer than this is rambling: the schema caps it (the grammar stops it)

YES_SPELLINGS = frozenset({"y", "ye", "yes"})  # a tokenizer may split "yes" after its first letters
NO_SPELLINGS = frozenset({"n", "no"})
TokenLogprobs = Sequence[tuple[str, Sequence[tuple[str, float]]]]


class YesNoVerdict(BaseModel):
    """The one-verdict reply: the reason first, then "yes" or "no"."""

    # required, like every field of a verdict: llama-cpp-python's schema grammar writes required
    # properties before optional ones, so an optional reason would come after the verdict
    reason: str = Field(max_length=REASON_CHARS)
    verdict: YesNo


@dataclass(frozen=True, slots=True)
class Judgement:
    """A verdict as decided: ``passed`` from P(yes) against the threshold where the server gave
    log-probabilities, else from the verdict as written."""

    passed: bool
    reason: str
    p_yes: float | None
    threshold: float
    written: bool  # the verdict as the model wrote it

    def trace(self) -> dict[str, Any]:
        return {"verdict": "yes" if self.passed else "no", "written": "yes" if self.written else "no",
                "p_yes": None if self.p_yes is None else round(self.p_yes, 4), "threshold": self.threshold,
                "reason": self.reason}


def decide(written: bool, p_yes: float | None, threshold: float, reason: str = "") -> Judgement:
    passed = written if p_yes is None else p_yes >= threshold
    return Judgement(passed, reason, p_yes, threshold, written)


def _key_pattern(key: str) -> re.Pattern[str]:
    return re.compile(r'"' + re.escape(key) + r'"\s*:\s*"?\s*$')


def _content(token: str) -> str:
    return token.strip(" \t\n\"'").casefold()


def yes_share(alternatives: Sequence[tuple[str, float]]) -> float | None:
    """P(yes) / (P(yes) + P(no)) over the alternatives of the verdict's first token, every spelling of
    each counted ("yes", " Yes", "\"yes"); None when neither appears."""
    p_yes = sum(math.exp(lp) for tok, lp in alternatives if _content(tok) in YES_SPELLINGS)
    p_no = sum(math.exp(lp) for tok, lp in alternatives if _content(tok) in NO_SPELLINGS)
    total = p_yes + p_no
    return p_yes / total if total > 0 else None


def verdict_probability(tokens: TokenLogprobs, key: str) -> float | None:
    """P(yes) of the JSON field ``key`` ("verdict": "yes"): the share of yes in the alternatives of the
    first token with content after the field's name (a lone quote or space before it is skipped); None
    when the reply has no such field or no alternatives there."""
    pattern = _key_pattern(key)
    text = ""
    found = False
    for token, alternatives in tokens:
        if not found and pattern.search(text):
            found = True
        if found and _content(token):
            return yes_share(alternatives)
        text += token
    return None


def verdict_probabilities(tokens: TokenLogprobs, keys: Sequence[str]) -> dict[str, float]:
    """P(yes) of each of ``keys`` the reply's log-probabilities give."""
    out: dict[str, float] = {}
    for key in keys:
        p = verdict_probability(tokens, key)
        if p is not None:
            out[key] = p
    return out


def judged(value: BaseModel, probabilities: Mapping[str, float], key: str, threshold: float,
           reason: str = "") -> Judgement:
    """The Judgement of field ``key`` ("yes"/"no") of a parsed reply with its P(yes) where known."""
    return decide(getattr(value, key) == "yes", probabilities.get(key), threshold, reason)
