"""An answer that only restates the question: every content word of it is one the question already
says ("Lilu" for "If Gallu is a demon Lilu is what?", "Barry Wesson's team played in the World Series
last year." for "Who did Barry Wesson's team play in the World Series last year?"). Such an answer is
never what was asked, except where the question offers the choice itself ("X or Y", "between", "both")
or asks yes or no; those are left alone. The reader asks once again (``RESTATEMENT_REPAIR``), saying
why, and the second reply stands.

Over the earlier answer-quality records (646 answers of every method with Qwen2.5-Coder-1.5B), 29
answers were such restatements, every one scored 0."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")
_MARKER = re.compile(r"\[\d+\]")
# Function words: a restatement is judged by the words that carry content.
_FUNCTION_WORDS = frozenset(
    "a an the of in on at to for from by with as and or is was were are be been being that this these those "
    "which who whom whose what when where why how did does do its it his her their he she they s".split())
# Questions whose answer may well be one of their own words: a choice they offer, or yes and no.
_OFFERS_CHOICE = re.compile(r"\b(or|between|both|either|neither)\b")
_STEM = 4  # an inflected form shares its first letters with the question's word ("played", "play")

RESTATEMENT_REPAIR = ("Your answer \"{answer}\" only repeats words of the question. Look again at what is given above "
                      "and reply with what the question asks for (a name, place, date, number or description "
                      "found there), in the same form: a Reasoning line, then \"Answer: \" with the answer and "
                      "the numbers that support it. Question: {question}")


def _content(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.casefold()) if w not in _FUNCTION_WORDS]


def _said(word: str, question_words: set[str]) -> bool:
    if word in question_words:
        return True
    return len(word) >= _STEM and any(len(q) >= _STEM and (word.startswith(q) or q.startswith(word))
                                      for q in question_words)


def restates_question(answer: str | None, question: str | None) -> bool:
    """Whether the answer's content words are all words the question already says (see the module)."""
    if not answer or not question or _OFFERS_CHOICE.search(question.casefold()):
        return False
    words = _content(_MARKER.sub(" ", answer))
    if not words or words[0] in ("yes", "no"):
        return False
    asked = set(_content(question))
    return all(_said(w, asked) for w in words)
