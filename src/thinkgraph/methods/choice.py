"""Questions that offer a choice ("Which singer is American, Mark King or Nick Hexum?"): which option a
reply's own reasoning gives the asked property, and whether two questions pose the same choice.

A small reader sometimes reasons to one option and answers the other: Qwen2.5-1.5B wrote "Mark King is
an English musician, while Nick Hexum is an American singer, songwriter, and rapper." and then "Answer:
Mark King" (tog3 on HotpotQA, where a sub-question answered along the way had said "Mark King"). The
reasoning is the step the answer format asks to be followed; an answer that contradicts it is asked
again once (``replies.second_look``), shown the sentence that says otherwise.

The reading is deliberately narrow, so that it only fires on a plain contradiction: a clause of the
reasoning that names one option and not the other, states something (no question, no "if" or "would"),
is not negated ("not", "hardly", "non-", "nobody"), has the option as its subject ("Nick Hexum is ...":
the option opens the clause, after a joining word at most, and a form of "be" follows it; "An American
singer praised Nick Hexum", "Nick Hexum admires an American singer" and "Nick Hexum's mother is ..." say
nothing of him), and holds every content word of what the question asks before its options ("singer",
"American") between that verb and the first relative or prepositional tail after it ("... who toured
American cities" is a tail), where no such clause names the other option, and the reasoning does not take
anything back ("wait", "actually", "however", "wrong"). A comparison ("The Exies were formed in 1997,
while Circus Diablo was formed in 2006" for "Which band was formed first?") holds no such clause, and
nothing is read from it.
"""

from __future__ import annotations

import re

from thinkgraph.methods import answer_shape
from thinkgraph.retrieval.compaction import stems

# Where one clause of a reasoning ends: a sentence's end, a line's, a semicolon or colon, or a joining word
# after a comma ("..., while ...", "..., whereas ...", "..., but ...", "..., and ...").
_CLAUSE_END = re.compile(r"(?<=[.!?])\s+|\n+|[;:]\s*|,\s*(?:while|whereas|but|and|although|though)\s+|"
                         r"\s+(?:while|whereas)\s+", re.IGNORECASE)
_MARKER = re.compile(r"\[\d+\]")
_LABEL = re.compile(r"^\s*(?:reasoning|thoughts?|explanation)\s*:\s*", re.IGNORECASE | re.MULTILINE)
# A reasoning that corrects itself: which of its claims stands is not for a word match to say.
_TAKES_BACK = re.compile(r"\b(?:wait|actually|however|wrong|mistaken|mistake|incorrect|instead|correction)\b",
                         re.IGNORECASE)
_CONDITIONAL = re.compile(r"\b(?:if|would|might|could|unless|whether|suppose|assuming)\b", re.IGNORECASE)
# What begins a clause's tail after the option: a relative clause or a prepositional phrase, whose words
# say something of another thing ("who toured American cities", "popular with American audiences").
_TAIL = re.compile(r"\b(?:who|whom|whose|which|that|with|to|for|in|from|at|by|on|of|after|before|during|than)\b",
                   re.IGNORECASE)
# What may open a clause before its subject, and the verbs that say what the subject is.
_LEAD = re.compile(r"(?:(?:so|thus|therefore|hence|and|but|then|clearly|only)\b[\s,]*)*(?:the\s+)?", re.IGNORECASE)
_BE = re.compile(r"\s*(?:is|was|are|were|has\s+been|have\s+been|had\s+been|became|becomes|remains|remained)\b",
                 re.IGNORECASE)
# Negations answer_shape.is_negated leaves to a sentence's other readers: here they would turn a claim over.
_DENIED = re.compile(r"\b(?:hardly|scarcely|barely|nobody|false|untrue)\b|\bnon-", re.IGNORECASE)
# "..., yes or no?" offers no two things to choose between.
_NOT_OPTIONS = (frozenset(("yes", "no")), frozenset(("true", "false")))

CHOICE_REPAIR = ("Your reasoning says \"{clause}\", but your answer is \"{answer}\". Look again at what is given "
                 "above and reply in the same form: a Reasoning line, then \"Answer: \" with the answer and the "
                 "numbers that support it. Question: {question}")


def offered(question: str) -> tuple[str, tuple[str, str]] | None:
    """What ``question`` asks before its options (all of it before the last clause) and its two options,
    or None when it offers no two options (nor for "..., yes or no?")."""
    found = answer_shape.offered_options(question)
    if found is None or _folded(found[1]) in _NOT_OPTIONS:
        return None
    return answer_shape.before_options(question), found[1]


def same_choice(sub_query: str, question: str) -> bool:
    """Whether ``sub_query`` poses ``question``'s own choice: the same two options ("Who is American, Mark King
    or Nick Hexum?" for "Which singer is American, Mark King or Nick Hexum?"), negated alike, and asking
    what the question asks or a part of it (the content words of one's asking clause are all the other's:
    "When were they born, Mark King or Nick Hexum?" asks something else of the same two)."""
    asked, posed = offered(sub_query), offered(question)
    if asked is None or posed is None or _folded(asked[1]) != _folded(posed[1]):
        return False
    if answer_shape.is_negated(asked[0]) != answer_shape.is_negated(posed[0]):
        return False
    a, b = stems(asked[0]), stems(posed[0])
    return bool(a) and bool(b) and (a <= b or b <= a)


def reasoned_option(reasoning: str, question: str) -> tuple[str, str] | None:
    """The option of "..., A or B?" that ``reasoning`` gives what the question asks, with the clause that
    says so (see the module); None when the question offers no two options, its asking clause is negated
    or has no content word, the reasoning takes something back, or it says so of no one option."""
    posed = offered(question)
    if posed is None or answer_shape.is_negated(posed[0]) or _TAKES_BACK.search(reasoning):
        return None
    wanted = stems(posed[0])
    if not wanted:
        return None
    found: dict[str, str] = {}
    for clause in _clauses(reasoning):
        named = answer_shape.named_options(clause, posed[1])
        if len(named) != 1 or clause.endswith("?") or _denies(clause) or _CONDITIONAL.search(clause):
            continue
        said = _said_of(clause, named[0][0])
        if said is not None and wanted <= stems(said):
            found.setdefault(named[0][0], clause)
    return next(iter(found.items())) if len(found) == 1 else None


def contradicted_choice(answer: str, reasoning: str | None, question: str) -> str | None:
    """The clause of ``reasoning`` that gives the asked property to the option ``answer`` does not name,
    where ``answer`` names exactly the other option and is not negated ("not Mark King" agrees with a
    reasoning that Nick Hexum is the one); None otherwise."""
    posed = offered(question)
    if not reasoning or posed is None or answer_shape.is_negated(answer):
        return None
    named = [o for o, _, _ in answer_shape.named_options(answer, posed[1])]
    reasoned = reasoned_option(reasoning, question) if len(named) == 1 else None
    return reasoned[1] if reasoned is not None and named[0] != reasoned[0] else None


def _clauses(reasoning: str) -> list[str]:
    text = _MARKER.sub("", _LABEL.sub("", reasoning))
    return [c.strip(" ,.") for c in _CLAUSE_END.split(text) if c and c.strip(" ,.")]


def _denies(clause: str) -> bool:
    return answer_shape.is_negated(clause) or bool(_DENIED.search(clause))


def _said_of(clause: str, option: str) -> str | None:
    """What ``clause`` says ``option`` is: from the form of "be" right after the option up to the first
    relative or prepositional word after it (the rest of the clause without one); None unless the option is
    the clause's subject (see the module). The option's own words are never part of it ("Bank of America is
    older" says only "older": "bank" is the option's name, not said of it)."""
    at = clause.casefold().find(option.casefold())
    if at < 0 or _LEAD.fullmatch(clause[:at]) is None:
        return None
    verb = _BE.match(clause, at + len(option))
    if verb is None:
        return None
    tail = _TAIL.search(clause, verb.end())
    return clause[verb.end():] if tail is None else clause[verb.end():tail.start()]


def _folded(options: tuple[str, str]) -> frozenset[str]:
    return frozenset(" ".join(o.casefold().split()) for o in options)
