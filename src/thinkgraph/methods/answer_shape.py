"""An answer's shape against its question: the short answer inside a sentence that restates the
question, and an answer that cannot be what a "who", "where" or "which of the two" question asks for (a bare
date), or a "how many" question (no number).

Asked for "the answer in a few words", a small model still writes now and then a sentence around it that
copies the question: "The San Antonio River flows through the city Kevin Durant played for before Golden
State." for "What river flows through the city ...?", or "Yes, both Christopher Nolan and Sathish
Kalathil are film directors." The answer is the part the question did not say (``short_answer``):
before a copied run of the question's words, or after the "is" that follows one; "yes"/"no" for a
plain yes/no question; the option it names of the two a "..., A or B?" question offers, when it says
nothing else new ("The Pterocarya is larger." -> "Pterocarya"; not for a negated question); a sentence that
names an option and says more is not cut ("A was founded first, in 1887, before B" keeps A). Only a
one-sentence answer is cut, so that a long answer keeps all it says, and a run that continues a name ("The
Band of the Royal Marines", "Return of the King of the North") is not a copy to cut.

A bare date or number is never the person or place a "who" or "where" question asks for ("1975" for
"Where did the band form ...?", "in 1846" for "Who was president when ...?"), and a name with no number
in it is never the count, year or share a "how many", "what year" or "what was the population" question
asks for ("Young, New South Wales" for the population of the town where someone was born: the bridge
entity, where the chain stopped one hop short): such an answer is asked again once, told so, by the
reader (``replies.ask_answer``, ``kind_mismatch``). Nor is it the one of two or three things a "which of
the two" question picks, unless those are years, dates or numbers, the answer is a year, or the question
offers the value.
Only these kinds are checked: a time has too many forms for a word list ("Tuesday", "at dawn", "the
Jurassic") to refuse one, so "when" questions are not, nor "how old / long / far" ones ("in his
forties", "a decade", "the semifinals"), and a quantity is accepted in words too ("twelve", "a dozen",
"several"). ("None" is read as an abstention before this.)

A sentence of eight words or more that opens with the question's words, copies a run of them and still runs on
after ``short_answer`` ("The books were being translated into several languages during the era of Haymo of
Faversham, including Latin and ...") is asked again once for only the words that answer
(``restating_sentence``), unless the question asks why or how, for an explanation or description, or yes or
no: the format asks for "a few words", and the answer-quality records held 11 such answers (every method,
Qwen2.5-Coder-1.5B), none scoring above 0.1 F1. A sentence that opens with words of its own ("Jurassic Park
and Schindler's List, both made by the director of Jaws in 1993") answers first and is left alone.

A number of three or more digits is read, not worked out: a population, a year, a sum of money. One
that nothing the model was shown states ("30,457" for a town whose passage says 6,960) was made up, and
is asked again once, told so (``unstated_number``). Shorter numbers are left alone: counts and
differences ("3", "12 years") are worked out from what the passages say. The words of an answer are
stated when each starts a word of what the model was shown (``stated_in``: accents, case and numbers
aside, which ``unstated_number`` reads).
"""

from __future__ import annotations

import re
import unicodedata

from thinkgraph.names import YEAR, is_value

MAX_RUN_WORDS = 400  # the answer's words searched for a copied run (an answer is capped near 300 words)
MIN_COPIED_WORDS = 4  # a shorter run is the question's entity named again, not the question restated
_WORD = re.compile(r"\w+")
_COPULA = re.compile(r"^\s*,?\s*(?:is|was|are|were|would be|will be)\s+", re.IGNORECASE)
_COMPARING_VERBS = frozenset(("is", "was", "are", "were", "has", "had", "have"))  # "A is larger / has more X than B"
_LAST_COPULA = re.compile(r"\b(?:is|was|are|were)\s+", re.IGNORECASE)
_TRAILING_JOINER = re.compile(r"[\s,;:-]+(?:(?:is|was|are|were)\s+)?(?:that|which|who|whom|where|when)?[\s,;:-]*$",
                              re.IGNORECASE)
_FUNCTION_WORDS = frozenset(("the", "a", "an", "of", "in", "on", "at", "to", "by", "for", "and", "or", "is", "was",
                             "are", "were", "be", "it", "its", "this", "that", "which", "who", "where", "when",
                             "there", "here", "then"))
# Words that join a name to what follows: a copied run after one of them, or starting with one, goes on
# a name ("Return of | the King of the North", "The Band | of the Royal Marines"), not a restatement.
_NAME_JOINERS = frozenset(("of", "the", "a", "an", "in", "on", "at", "for", "to", "from", "with", "by", "and", "or",
                           "de", "du", "la", "von", "van"))
_PREPOSITIONS = _NAME_JOINERS - {"the", "a", "an"}
_WH_WITH_NOUN = frozenset(("what", "which", "whose", "how"))
_SENTENCE_BREAK = re.compile(r"[.!?]\s+\S")
_YES_NO_QUESTION = re.compile(r"^\s*(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|"
                              r"shall|may|might|must)\b", re.IGNORECASE)
# A choice the question offers, or a question inside it ("Do you know who wrote Hamlet?"): not yes/no.
_NOT_YES_NO = re.compile(r"\b(?:or|between|either|neither|who|whom|whose|what|which|where|when|why|how)\b",
                         re.IGNORECASE)
_YES_NO_ANSWER = re.compile(r"^\s*(yes|no)\b(?=\s*(?:[,.;:!—–-]|$))", re.IGNORECASE)
_OPENERS = "([{\"'“‘"
# The options of "Which plant is larger, the Pterocarya or the Cotula?": the question's last clause after a
# comma, colon or semicolon and a space (so that "1,000" stays one number), split at its last "or"; the
# first clause is what is asked.
# a clause ends at a comma, save one inside a name: "Sammy Davis, Jr.", "Washington, D.C.", "Acme, Inc."
_LAST_CLAUSE = re.compile(r"[,;:]\s+(?!(?:Jr|Sr|Inc|Ltd|Co|Corp|LLC|D\.C|II|III|IV)\b\.?(?:\s|$|[,?]))")
_LOWER_ARTICLE = re.compile(r"^\s*(?:the|a|an)\s+")  # "the Pterocarya"; "The Who" is a name
_NEGATION = re.compile(r"\b(?:not|never|neither|nor|least|fewest|no)\b|n't\b", re.IGNORECASE)

REPAIR = ("Your answer \"{answer}\" is not {wanted}, which is what the question asks for. Look again at what is "
          "given above and reply in the same form: a Reasoning line, then \"Answer: \" with the answer and the "
          "numbers that support it. Question: {question}")

_ASKS_WHO_OR_WHERE = re.compile(r"^\s*(?:who|whom|whose|where)\b|^\s*(?:in|at|from)\s+(?:what|which)\s+(?:city|"
                                r"country|state|place|town|county|region|continent)\b", re.IGNORECASE)
# "Which of the two ... ?" picks one of two things the question has in mind: a bare count or year is never
# one of them ("36" for "Which of the two tornado outbreaks killed the most people?": the deaths, read
# from the right passage, in place of the outbreak) — unless the things are years, dates or numbers, or
# the question offers the value itself ("Which of the two albums came first, 1989 or Reputation?"), or the
# answer is a year, which names events ("the 2008 election").
_ASKS_ONE_OF = re.compile(r"^\s*which\s+(?:one\s+)?of\s+(?:the|these|those)\s+(?:(?:two|three)\s+)?(\w+)",
                          re.IGNORECASE)
# "Which of the two is older?": no things named, so no telling they are not values
_NOT_NOUNS = frozenset(("is", "was", "are", "were", "has", "had", "have", "did", "does", "do", "can", "could", "will",
                        "would", "came", "comes"))
_VALUE_NOUNS = frozenset(("years", "dates", "decades", "centuries", "numbers", "seasons", "days", "months", "ages",
                          "figures", "amounts", "totals", "counts", "scores"))
WANTED = "the person, place or thing it asks for (a date or number alone is not)"
# Questions whose answer is a number: a count, an amount, an age, a length, a year, a population, a share.
# ("what was the city's population", "what is the number of"; up to three words between). Only questions
# whose answer is a count, an amount, a year or a share: "how old / long / far" are answered in words as
# often ("in his forties", "a decade", "the semifinals"), "the number one album" is a name.
_ASKS_QUANTITY = re.compile(r"\bhow\s+(?:many|much)\b|\b(?:what|which)\s+year(?![\w'\u2019-])|"
                            r"\b(?:what|which)\s+(?:is|was|were|are)\s+(?:[\w']+\s+){0,3}?"
                            r"(?:population|number\s+of|percentage)\b|\bwhat\s+percent(?:age)?\b", re.IGNORECASE)
# Number words, and the words of a quantity without one ("a few", "several", "most of it", "a decade").
_QUANTITY_WORDS = frozenset((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty",
    "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "hundreds", "thousand", "thousands",
    "million", "millions", "billion", "billions", "trillion", "dozen", "dozens", "half", "once", "twice", "thrice",
    "no", "none", "few", "several", "many", "most", "all", "some", "decade", "decades", "century", "centuries"))
WANTED_NUMBER = "the number it asks for (an answer with no number in it is not)"


# A sentence of this many words or more that copies a run of the question is no short answer (see the module).
LONG_ANSWER_WORDS = 8  # ours: the format asks for "a few words"; a copied run is 4 of them
RESTATED_OPENING_WORDS = 4  # ours: "The books were being translated into ..." opens with the question's words
# Questions whose answer is an explanation or a description, which a sentence is: "why", "how" (not "how many /
# much / old ..."), "explain", "describe".
_ASKS_EXPLANATION = re.compile(r"^\s*why\b|^\s*how\b(?!\s+(?:many|much|old|long|far|tall|big|large|high|often|"
                               r"few|wide|deep|heavy))|\b(?:explain|describe)\b", re.IGNORECASE)
SENTENCE_REPAIR = ("Your answer \"{answer}\" is a whole sentence that repeats the question. Reply in the same form: "
                   "a Reasoning line, then \"Answer: \" with only the words that answer the question (a name, place, "
                   "date, number or phrase, not a sentence) and the numbers that support it. Question: {question}")

NUMBER_REPAIR = ("Your answer states {number}, a number that nothing above states. Look again at what is given "
                 "above and reply in the same form: a Reasoning line, then \"Answer: \" with the answer as the "
                 "passages state it. Question: {question}")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
MIN_READ_DIGITS = 3  # a number this long is read from the passages, not worked out (see the module)


def unstated_number(answer: str, shown: str) -> str | None:
    """The first number of ``MIN_READ_DIGITS`` or more digits in ``answer`` that ``shown`` (the text the
    model was given) does not state, thousands separators aside ("6,960" is "6960"); None when there is
    none."""
    read = read_numbers(answer)
    if not read:  # (most answers: the text shown is not scanned)
        return None
    stated = {_plain(m.group(0)) for m in _NUMBER.finditer(shown)}
    return next((number for number in read if _plain(number) not in stated), None)


def stated_in(answer: str, shown: list[str]) -> bool:
    """Whether the texts ``shown`` state the answer: each of its words starts a word of them (a word may be
    the start of a shown one: "Dec" of "December"), compared without accents or case ("Jimenez" is
    "Jiménez"). Words with a digit are left to ``unstated_number`` ("6,960" against "6960"; "3 years" is
    worked out); yes and no are never stated so: they pass."""
    words = [w for w in _WORD.findall(_folded(answer)) if not any(ch.isdigit() for ch in w)]
    if not words or " ".join(words) in ("yes", "no"):
        return True
    seen = " " + " ".join(_WORD.findall(_folded(" ".join(shown))))
    return all(f" {w}" in seen for w in words)


def _folded(text: str) -> str:
    """``text`` without accents (NFKD's combining marks dropped), case-folded."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)).casefold()


def read_numbers(answer: str) -> list[str]:
    """The numbers of ``MIN_READ_DIGITS`` or more digits ``answer`` states, as written."""
    return [m.group(0) for m in _NUMBER.finditer(answer)
            if sum(ch.isdigit() for ch in m.group(0)) >= MIN_READ_DIGITS]


def _plain(number: str) -> str:
    return number.replace(",", "")


def short_answer(answer: str, question: str | None) -> str:
    """The answer without the sentence around it that restates ``question`` (see the module); the
    answer itself when it is not such a sentence."""
    if not answer or not question:
        return answer
    yes_no = _YES_NO_ANSWER.match(answer)
    if yes_no and _is_yes_no(question):
        return yes_no.group(1).capitalize()
    if _SENTENCE_BREAK.search(answer.strip()):
        return answer  # more than one sentence: a long answer keeps what it says
    picked = _picked_option(answer, question)
    if picked is not None:
        return picked
    offered = offered_options(question)
    if offered is not None and named_options(answer, offered[1]):
        return answer  # names an option in a sentence no cut reads safely: "A was founded first, before B"
    start, end = _copied_run(answer, question)
    if end - start == 0 or _continues_a_name(answer[:start], answer[start:end]):
        return answer
    said = {w.casefold() for w in _WORD.findall(question)}
    after = answer[end:]
    copula = _COPULA.match(after)
    if copula and _says_more(after[copula.end():], said):
        return _tidy(_after_last_copula(after[copula.end():], said))
    before = _without_restated_tail(_TRAILING_JOINER.sub("", answer[:start]), said)
    if _says_more(before, said) and not _says_more(after, said):
        return _tidy(before)
    return answer


def _picked_option(answer: str, question: str) -> str | None:
    """The one option of "..., A or B?" that ``answer`` names, as the question writes it (a lowercase
    article dropped: "The Who" stays whole), when the rest of the answer says nothing the asking clause
    did not ("The Pterocarya is larger." for "Which plant is larger, the Pterocarya or the Cotula?");
    None otherwise, and for a negated question ("Which is not a plant, ...?"), where a sentence naming
    one option may say it is the other."""
    offered = offered_options(question)
    if offered is None or is_negated(offered[0]):
        return None
    found = named_options(answer, offered[1])
    asked = {w.casefold() for w in _WORD.findall(offered[0])}
    words = [w.casefold() for w in _WORD.findall(answer)]
    if len(found) == 2:
        return _comparison_subject(words, found, asked)
    if len(found) != 1:
        return None
    option, at, length = found[0]
    rest = " ".join(words[:at] + words[at + length:])
    return option if not _says_more(rest, asked) else None


def offered_options(question: str) -> tuple[str, tuple[str, str]] | None:
    """The asking clause and the two options of "..., A or B?" (a lowercase article dropped), or None."""
    clauses = _LAST_CLAUSE.split(question.strip().rstrip("?").strip())
    left, sep, right = clauses[-1].rpartition(" or ")
    if not sep or len(clauses) < 2:
        return None
    return clauses[0], (_LOWER_ARTICLE.sub("", left).strip(), _LOWER_ARTICLE.sub("", right).strip())


def before_options(question: str) -> str:
    """All of ``question`` before its last clause ("Which singer, born in 1970, is American" of "..., A or
    B?"); the asking clause of ``offered_options`` is its first clause alone, where an option with a comma
    in it ("Sammy Davis, Jr.") would otherwise be read as asked."""
    text = question.strip().rstrip("?").strip()
    ends = [m.start() for m in _LAST_CLAUSE.finditer(text)]
    return text[:ends[-1]] if ends else text


def is_negated(text: str) -> bool:
    """Whether ``text`` says "not", "never", "neither", "least" or the like."""
    return bool(_NEGATION.search(text))


def named_options(answer: str, options: tuple[str, str]) -> list[tuple[str, int, int]]:
    """The options ``answer`` names: each with the word it starts at and its length in words."""
    words = [w.casefold() for w in _WORD.findall(answer)]
    return [(o, at, len(ow)) for o in options
            if (ow := [w.casefold() for w in _WORD.findall(o)]) and (at := _run_at(words, ow)) is not None]


def _comparison_subject(words: list[str], found: list[tuple[str, int, int]], asked: set[str]) -> str | None:
    """The option a sentence naming both puts first, when it compares it with the other in the asking
    clause's own words ("The Pterocarya is larger than the Cotula" for "Which plant is larger, ...?"); None
    for any other sentence (a negated one, one that says more, one that names them the other way round)."""
    (first, at, length), (_, other_at, other_length) = sorted(found, key=lambda f: f[1])
    between = words[at + length:other_at]
    if words[:at] not in ([], ["the"], ["a"], ["an"]) or words[other_at + other_length:] or not between:
        return None
    if between[-1] in ("the", "a", "an"):
        between = between[:-1]
    if len(between) < 3 or between[0] not in _COMPARING_VERBS or between[-1] != "than":
        return None
    compared = " ".join(between[1:-1])
    return first if not _NEGATION.search(compared) and not _says_more(compared, asked) else None


def _run_at(words: list[str], run: list[str]) -> int | None:
    """Where ``run`` first occurs in ``words``, or None."""
    return next((i for i in range(len(words) - len(run) + 1) if words[i:i + len(run)] == run), None)


def kind_mismatch(answer: str, question: str | None) -> str | None:
    """What the question asks for, when ``answer`` is a bare date or number and the question asks who
    or where or picks one of two things, or ``answer`` states no number (in digits or words) and the
    question asks for one (see the module); None otherwise."""
    if not answer or not question:
        return None
    if _ASKS_WHO_OR_WHERE.search(question):
        return WANTED if is_value(answer) else None
    if _picks_one_of_things(question, answer):
        return WANTED
    if asks_for_number(question) and not states_quantity(answer):
        return WANTED_NUMBER
    return None


def restating_sentence(answer: str, question: str | None) -> bool:
    """Whether ``answer`` is a sentence of ``LONG_ANSWER_WORDS`` words or more that copies a run of the
    question's words and opens with the question's words (its first ``RESTATED_OPENING_WORDS``, function words
    aside), where the question asks for no explanation and is no yes/no question (see the module)."""
    if not answer or not question or _ASKS_EXPLANATION.search(question) or _is_yes_no(question):
        return False
    start, end = _copied_run(answer, question)
    said = {w.casefold() for w in _WORD.findall(question)}
    opening = _WORD.findall(answer)[:RESTATED_OPENING_WORDS]  # the question's words, not the answer's own:
    # "Jurassic Park and Schindler's List, both made by the director of Jaws in 1993" answers first
    return end > start and len(_WORD.findall(answer)) >= LONG_ANSWER_WORDS and \
        not _says_more(" ".join(opening), said)


def _is_yes_no(question: str) -> bool:
    return bool(_YES_NO_QUESTION.match(question)) and not _NOT_YES_NO.search(question)


def _picks_one_of_things(question: str, answer: str) -> bool:
    """Whether ``answer`` is a bare date or number where the question picks one of two or three things that
    are not values and offers no such value itself (see ``_ASKS_ONE_OF``)."""
    asked = _ASKS_ONE_OF.search(question)
    if not asked or asked.group(1).casefold() in _VALUE_NOUNS | _NOT_NOUNS or not is_value(answer):
        return False
    if YEAR.fullmatch(answer.strip().rstrip(".")):  # a year names events too ("the 2008 election")
        return False
    offered = {_plain(n) for n in _NUMBER.findall(question)}
    return not any(_plain(n) in offered for n in _NUMBER.findall(answer))


# Questions whose answer may be a bare number, more widely than ``asks_for_number``: "how old / long / far",
# "what number did he wear", "which episode", "what place did they finish in".
_MAY_WANT_NUMBER = re.compile(r"\bhow\s+\w+|\b(?:numbers?|place|rank(?:ed|ing)?|age|position|episodes?|seasons?|"
                              r"chapters?|volumes?|tracks?|floors?|grades?|scores?|seeds?|picks?|rounds?|levels?|"
                              r"pages?|editions?|versions?|laps?|innings|minutes?|hours?|days?|weeks?|months?|"
                              r"years?|decades?|centur(?:y|ies))\b", re.IGNORECASE)


def may_want_number(question: str) -> bool:
    """Whether ``question``'s answer may be a bare number (see ``_MAY_WANT_NUMBER``)."""
    return asks_for_number(question) or bool(_MAY_WANT_NUMBER.search(question))


def asks_for_number(question: str) -> bool:
    """Whether ``question`` wants a number for its answer: a count, an amount, a year, a population, a share."""
    return bool(_ASKS_QUANTITY.search(question))


def states_quantity(answer: str) -> bool:
    """Whether ``answer`` states a number: a digit, or a quantity word ("twelve", "a dozen", "several")."""
    return any(ch.isdigit() for ch in answer) or any(w.casefold() in _QUANTITY_WORDS for w in _WORD.findall(answer))


def _says_more(text: str, said: set[str]) -> bool:
    """Whether ``text`` has a word the question did not say (function words aside)."""
    return any(w.casefold() not in said and w.casefold() not in _FUNCTION_WORDS for w in _WORD.findall(text))


def _continues_a_name(before: str, run: str) -> bool:
    """Whether the copied run goes on the words before it: it starts with a preposition ("of the Royal
    Marines"), or what precedes it ends with a joining word ("Return of")."""
    first = _WORD.findall(run)[:1]
    last = _WORD.findall(before)[-1:]
    return bool(first and first[0].casefold() in _PREPOSITIONS) or bool(last and last[0].casefold() in _NAME_JOINERS)


def _after_last_copula(text: str, said: set[str]) -> str:
    """What follows the last "is"/"was" of ``text`` when that says something new ("released is 2008")."""
    copulas = list(_LAST_COPULA.finditer(text))
    rest = text[copulas[-1].end():] if copulas else ""
    return rest if rest and _says_more(rest, said) else text


def _without_restated_tail(text: str, said: set[str]) -> str:
    """``text`` without a last comma-separated part that says nothing new ("2008, the year" -> "2008")."""
    head, comma, tail = text.rpartition(",")
    return head if comma and _says_more(head, said) and not _says_more(tail, said) else text


def _tidy(text: str) -> str:
    """A cut answer without the punctuation and an opening bracket left at its ends ("Paris (")."""
    return text.strip().rstrip(_OPENERS + " ,;:-").rstrip(".").strip()


def _copied_run(answer: str, question: str) -> tuple[int, int]:
    """The character span of the answer's longest run of the question's words in order (at least
    ``MIN_COPIED_WORDS``), or (0, 0). The question's wh-word, and the word after "what", "which", "whose" or
    "how", are left out of the run: in "What river flows through ..." "river" is the answer's own head
    noun ("The San Antonio River flows through ..."). Only the answer's first ``MAX_RUN_WORDS`` words are
    searched (a longer reply is no short answer), by the longest common run of words, row by row."""
    said = [m.group().casefold() for m in _WORD.finditer(question)]
    said = said[2:] if said[:1] and said[0] in _WH_WITH_NOUN else said[1:]
    spans = [(m.start(), m.end(), m.group().casefold()) for m in _WORD.finditer(answer)][:MAX_RUN_WORDS]
    at: dict[str, list[int]] = {}
    for j, word in enumerate(said):
        at.setdefault(word, []).append(j)
    best = (0, 0)  # length, last word
    previous: dict[int, int] = {}  # run length ending at (the answer's word before, question's word j)
    for i, (_, _, word) in enumerate(spans):
        current = {j: previous.get(j - 1, 0) + 1 for j in at.get(word, ())}
        for length in current.values():
            if length > best[0]:
                best = (length, i)
        previous = current
    if best[0] < MIN_COPIED_WORDS:
        return 0, 0
    return spans[best[1] - best[0] + 1][0], spans[best[1]][1]
