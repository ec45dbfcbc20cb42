"""An answer's shape against its question: the short answer inside a sentence that restates the
question, and an answer of the wrong kind (a year for "where", a place for "when").

Asked for "the answer in a few words", a small model still writes now and then a sentence around it that
copies the question: "The San Antonio River flows through the city Kevin Durant played for before Golden
State." for "What river flows through the city ...?", or "Yes, both Christopher Nolan and Sathish
Kalathil are film directors." The answer is the part the question did not say (``short_answer``):
before a copied run of the question's words, or after the "is" that follows one; "yes"/"no" for a
yes/no question. Only a one-sentence answer is cut, so that a long answer keeps all it says.

A question that asks when wants a time, how many a number, who or where not a bare date
(``kind_mismatch``); an answer that is not one ("Mississippi" for "When did the state ... become part of
the US?", "1975" for "Where did the band form ...?") is asked again once, told so, by the reader
(``replies.ask_answer``). The check is lexical and conservative: any digit, month, or time word passes as a
time; it stops only answers that cannot be of the kind asked.
"""

from __future__ import annotations

import re

MIN_COPIED_WORDS = 4  # a shorter run is the question's entity named again, not the question restated
_WORD = re.compile(r"\w+")
_COPULA = re.compile(r"^\s*,?\s*(?:is|was|are|were|would be|will be)\s+", re.IGNORECASE)
_TRAILING_JOINER = re.compile(r"[\s,;:-]+(?:(?:is|was|are|were)\s+)?(?:that|which|who|whom|where|when)?[\s,;:-]*$",
                              re.IGNORECASE)
_FUNCTION_WORDS = frozenset(("the", "a", "an", "of", "in", "on", "at", "to", "by", "for", "and", "or", "is", "was",
                             "are", "were", "be", "it", "its", "this", "that", "which", "who", "where", "when",
                             "there", "here", "then"))
_WH_WITH_NOUN = frozenset(("what", "which", "whose", "how"))
_SENTENCE_BREAK = re.compile(r"[.!?]\s+\S")
_YES_NO_QUESTION = re.compile(r"^\s*(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|"
                              r"shall|may|might|must)\b", re.IGNORECASE)
_CHOICE = re.compile(r"\b(?:or|between|either|neither)\b", re.IGNORECASE)
_YES_NO_ANSWER = re.compile(r"^\s*(yes|no)\b(?=\s*(?:[,.;:!—–-]|$))", re.IGNORECASE)

REPAIR = ("Your answer \"{answer}\" is not {wanted}, which is what the question asks for. Look again at what is "
          "given above and reply in the same form: a Reasoning line, then \"Answer: \" with the answer and the "
          "numbers that support it. Question: {question}")

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
          "dec")
TIME_WORDS = frozenset((*MONTHS, "century", "centuries", "decade", "decades", "year", "years", "era", "age", "period",
                        "reign", "dynasty", "war", "season", "spring", "summer", "autumn", "fall", "winter", "ago",
                        "before", "after", "during", "since", "until", "today", "now", "present", "bc", "bce", "ad",
                        "ce", "morning", "evening", "night", "day", "days", "week", "weeks", "month", "months",
                        "hour", "hours", "minute", "minutes", "once", "never", "always", "early", "late", "mid"))
NUMBER_WORDS = frozenset(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                          "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
                          "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
                          "hundred", "hundreds", "thousand", "thousands", "million", "millions", "billion",
                          "billions", "dozen", "dozens", "half", "few", "several", "many", "none", "single",
                          "double", "twice", "decade", "century", "first", "second", "third"))
# The words a bare date is made of besides numbers and months: "in 1975", "on 4 July 1776", "the 1990s".
_DATE_FILLER = frozenset(("in", "on", "the", "of", "year", "ad", "bc", "bce", "ce", "s", "th", "st", "nd", "rd",
                          "around", "about", "circa", "c"))
_ASKS = (  # (pattern on the question, the kind of answer it wants)
    (re.compile(r"^\s*(?:(?:in|on|by|since|until|from|at)\s+)?(?:when\b|(?:what|which)\s+(?:year|date|day|"
                r"month|century|decade|time)\b)", re.IGNORECASE), "time"),
    (re.compile(r"^\s*how\s+(?:many|much|old|long|far|tall|high|large|big|deep|wide)\b", re.IGNORECASE), "number"),
    (re.compile(r"^\s*(?:who|whom|whose|where)\b|^\s*(?:in|at|from)\s+(?:what|which)\s+(?:city|country|state|place|"
                r"town|county|region|continent)\b", re.IGNORECASE), "not a date"),
)
WANTED = {"time": "a date or time", "number": "a number or amount",
          "not a date": "the person, place or thing it asks for (a date or number alone is not)"}


def short_answer(answer: str, question: str | None) -> str:
    """The answer without the sentence around it that restates ``question`` (see the module); the
    answer itself when it is not such a sentence."""
    if not answer or not question:
        return answer
    yes_no = _YES_NO_ANSWER.match(answer)
    if yes_no and _YES_NO_QUESTION.match(question) and not _CHOICE.search(question):
        return yes_no.group(1).capitalize()
    if _SENTENCE_BREAK.search(answer.strip()):
        return answer  # more than one sentence: a long answer keeps what it says
    start, end = _copied_run(answer, question)
    if end - start == 0:
        return answer
    said = {w.casefold() for w in _WORD.findall(question)}
    after = answer[end:]
    copula = _COPULA.match(after)
    if copula and _says_more(after[copula.end():], said):
        return after[copula.end():].strip().rstrip(".").strip()
    before = _TRAILING_JOINER.sub("", answer[:start]).strip()
    if _says_more(before, said) and not _says_more(after, said):
        return before
    return answer


def kind_mismatch(answer: str, question: str | None) -> str | None:
    """What the question asks for, when ``answer`` cannot be that (see the module); None when it can."""
    if not answer or not question:
        return None
    kind = next((k for pattern, k in _ASKS if pattern.search(question)), None)
    words = [w.casefold() for w in _WORD.findall(answer)]
    if kind is None or not words:
        return None
    numeric = any(ch.isdigit() for ch in answer)
    if kind == "time" and not numeric and not TIME_WORDS.intersection(words):
        return WANTED[kind]
    if kind == "number" and not numeric and not NUMBER_WORDS.intersection(words):
        return WANTED[kind]
    if kind == "not a date" and numeric and all(_date_word(w) for w in words):
        return WANTED[kind]
    return None


def _date_word(word: str) -> bool:
    return word.isdigit() or word in MONTHS or word in _DATE_FILLER or bool(re.fullmatch(r"\d+(?:s|st|nd|rd|th)", word))


def _says_more(text: str, said: set[str]) -> bool:
    """Whether ``text`` has a word the question did not say (function words aside)."""
    return any(w.casefold() not in said and w.casefold() not in _FUNCTION_WORDS for w in _WORD.findall(text))


def _copied_run(answer: str, question: str) -> tuple[int, int]:
    """The character span of the answer's longest run of the question's words in order (at least
    ``MIN_COPIED_WORDS``), or (0, 0). The question's wh-word, and the word after "what", "which", "whose" or
    "how", are left out of the run: in "What river flows through ..." "river" is the answer's own head
    noun ("The San Antonio River flows through ...")."""
    said = [m.group().casefold() for m in _WORD.finditer(question)]
    said = said[2:] if said[:1] and said[0] in _WH_WITH_NOUN else said[1:]
    spans = [(m.start(), m.end(), m.group().casefold()) for m in _WORD.finditer(answer)]
    best = (0, 0, 0)  # length, first word, last word
    for i in range(len(spans)):
        for j in range(len(said)):
            k = 0
            while i + k < len(spans) and j + k < len(said) and spans[i + k][2] == said[j + k]:
                k += 1
            if k > best[0]:
                best = (k, i, i + k - 1)
    if best[0] < MIN_COPIED_WORDS:
        return 0, 0
    return spans[best[1]][0], spans[best[2]][1]
