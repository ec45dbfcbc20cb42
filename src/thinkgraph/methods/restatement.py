"""An answer that only restates the question: every content word of it is one the question already
says ("Lilu" for "If Gallu is a demon Lilu is what?", "Barry Wesson's team played in the World Series
last year." for "Who did Barry Wesson's team play in the World Series last year?"). Such an answer is
never what was asked, except where the question offers the choice itself ("X or Y", "between", "both")
or asks yes or no; those are left alone. The reader asks once again (``RESTATEMENT_REPAIR``), saying
why, and the second reply stands.

Over the answer-quality records (answers of every method with Qwen2.5-Coder-1.5B), 38 were such
restatements and none was right: 33 scored 0, 5 part of a word ("Humboldt Range" for "Humboldt Peak
... is part of what mountain range?")."""

from __future__ import annotations

import re

from thinkgraph.retrieval.compaction import stems

_WORD = re.compile(r"\w+")
_MARKER = re.compile(r"\[\d+\]")
# Questions whose answer may well be one of their own words: a choice they offer.
_OFFERS_CHOICE = re.compile(r"\b(or|between|both|either|neither)\b")
_YES_NO = frozenset(("yes", "no"))

RESTATEMENT_REPAIR = ("Your answer \"{answer}\" only repeats words of the question. Look again at what is given above "
                      "and reply with what the question asks for (a name, place, date, number or description "
                      "found there), in the same form: a Reasoning line, then \"Answer: \" with the answer and "
                      "the numbers that support it. Question: {question}")


def restates_question(answer: str | None, question: str | None) -> bool:
    """Whether the answer's content words are all words the question already says (see the module)."""
    if not answer or not question or _OFFERS_CHOICE.search(question.casefold()):
        return False
    said = _MARKER.sub(" ", answer)
    if set(_WORD.findall(said.casefold())[:1]) & _YES_NO:
        return False
    words = stems(said)  # content words as Snowball stems: "played" meets "play"
    return bool(words) and words <= stems(question)
