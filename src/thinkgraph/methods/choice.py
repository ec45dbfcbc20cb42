"""Questions that offer a choice ("Which singer is American, Mark King or Nick Hexum?"): which option a
reply's own reasoning gives the asked property, and whether two questions pose the same choice.

A small reader sometimes reasons to one option and answers the other: Qwen2.5-1.5B wrote "Mark King is
an English musician, while Nick Hexum is an American singer, songwriter, and rapper." and then "Answer:
Mark King" (tog3 on HotpotQA, where a sub-question answered along the way had said "Mark King"). The
reasoning is the step the answer format asks to be followed; an answer that contradicts it is asked
again once (``replies.second_look``), shown the sentence that says otherwise.

The reading is deliberately narrow, so that it only fires on a plain contradiction: a clause of the
reasoning that names one option and not the other, is not negated, and holds every content word of the
asking clause ("singer", "American"), where no such clause names the other option. A comparison ("The
Exies were formed in 1997, while Circus Diablo was formed in 2006" for "Which band was formed first?")
holds no such clause, and nothing is read from it.
"""

from __future__ import annotations

import re

from thinkgraph.methods import answer_shape
from thinkgraph.retrieval.compaction import stems

# Where one clause of a reasoning line ends: a sentence's end, a semicolon, or a joining word after a
# comma ("..., while ...", "..., whereas ...", "..., but ...", "..., and ...").
_CLAUSE_END = re.compile(r"(?<=[.!?])\s+|;\s*|,\s*(?:while|whereas|but|and|although|though)\s+|\s+(?:while|whereas)\s+",
                         re.IGNORECASE)
_MARKER = re.compile(r"\[\d+\]")
_REASONING_LABEL = re.compile(r"^\s*reasoning\s*:\s*", re.IGNORECASE)

CHOICE_REPAIR = ("Your reasoning says \"{clause}\", but your answer is \"{answer}\". Look again at what is given "
                 "above and reply in the same form: a Reasoning line, then \"Answer: \" with the answer and the "
                 "numbers that support it. Question: {question}")


def same_choice(sub_query: str, question: str) -> bool:
    """Whether ``sub_query`` offers the same two options as ``question`` ("Who is American, Mark King or
    Nick Hexum?" for "Which singer is American, Mark King or Nick Hexum?"): it poses the question's own
    choice again, however its asking clause is worded."""
    asked, offered = answer_shape.offered_options(sub_query), answer_shape.offered_options(question)
    return asked is not None and offered is not None and _folded(asked[1]) == _folded(offered[1])


def reasoned_option(reasoning: str, question: str) -> tuple[str, str] | None:
    """The option of "..., A or B?" that ``reasoning`` gives what the asking clause asks, with the clause that
    says so: the one option named alone by a clause that is not negated and holds every content word of the
    asking clause (as stems: "singer", "American"), when no such clause names the other. None when the question
    offers no two options, its asking clause is negated or has no content word, or the reasoning says no
    such thing of exactly one option."""
    offered = answer_shape.offered_options(question)
    if offered is None or answer_shape.is_negated(offered[0]):
        return None
    wanted = stems(offered[0])
    if not wanted:
        return None
    found: dict[str, str] = {}
    for clause in _clauses(reasoning):
        named = answer_shape.named_options(clause, offered[1])
        if len(named) == 1 and not answer_shape.is_negated(clause) and wanted <= stems(clause):
            found.setdefault(named[0][0], clause)
    return next(iter(found.items())) if len(found) == 1 else None


def contradicted_choice(answer: str, reasoning: str | None, question: str) -> str | None:
    """The clause of ``reasoning`` that gives the asked property to the option ``answer`` does not name,
    where ``answer`` names exactly the other option (``reasoned_option``); None otherwise."""
    offered = answer_shape.offered_options(question)
    if not reasoning or offered is None:
        return None
    reasoned = reasoned_option(reasoning, question)
    named = [o for o, _, _ in answer_shape.named_options(answer, offered[1])]
    if reasoned is None or len(named) != 1 or named[0] == reasoned[0]:
        return None
    return reasoned[1]


def _clauses(reasoning: str) -> list[str]:
    text = _MARKER.sub("", _REASONING_LABEL.sub("", reasoning))
    return [c.strip(" ,.") for c in _CLAUSE_END.split(text) if c and c.strip(" ,.")]


def _folded(options: tuple[str, str]) -> frozenset[str]:
    return frozenset(" ".join(o.casefold().split()) for o in options)
