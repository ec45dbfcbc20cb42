"""Name-like phrases in text, found without a model: capitalised phrases (with connecting words such as
"of" or "von") and years. One reading shared by the model-free extractor (index/extract_nolm.py), the
linking of question entities (retrieval/linking.py) and A2RAG's fallback seeds, so that a question
names entities the way the index does."""

from __future__ import annotations

import re

_CAP = r"[A-Z][\w'\-.]*[\w]|[A-Z]"
_CONNECT = r"(?:of|the|de|du|la|von|van|der)"
_PHRASE = re.compile(rf"\b(?:{_CAP})(?:\s+(?:{_CONNECT}\s+)*(?:{_CAP}))*")
YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
# Capitalised words that start sentences or are function words, not names.
_STOP = {
    "the", "a", "an", "in", "on", "at", "it", "its", "this", "that", "these", "those", "he", "she", "they",
    "we", "i", "you", "his", "her", "their", "our", "by", "for", "from", "with", "as", "after", "before",
    "during", "when", "while", "but", "and", "or", "if", "then", "there", "here", "however", "although",
    "since", "because", "of", "to", "is", "was", "were", "are", "be", "also", "many", "most", "some",
    "each", "every", "both", "all", "one", "two", "three", "first", "second", "other", "such", "what",
    "which", "who", "whom", "where", "why", "how", "not", "no", "yes", "so", "than", "until", "over",
    "under", "into", "about", "between", "today", "later", "early", "late", "besides", "meanwhile",
    "despite", "thus", "therefore", "moreover", "furthermore", "instead", "still", "yet", "now", "once",
    "soon", "afterwards", "eventually", "finally", "initially", "originally", "currently", "recently",
    "unlike", "like", "according", "along", "around", "throughout", "within", "without", "upon", "among",
}
MAX_ENTITIES_PER_SENTENCE = 12
# Ordinals start names ("Second World War", "First Baptist Church"): kept when a name follows them.
_ORDINALS = frozenset({"first", "second", "third", "fourth", "fifth"})
# Day and month names are parts of dates, not entities, when they stand alone ("every Friday").
_CALENDAR = frozenset({
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february",
    "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"})
# Month names and their short forms, the words dates are written with (shared by every reading of dates).
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
          "dec")
# The words a bare date or number is made of besides digits and months: "in 1975", "on 4 July 1776", "1990s".
_VALUE_FILLER = frozenset(("in", "on", "of", "year", "ad", "bc", "bce", "ce", "s", "around", "about", "circa", "c"))
_VALUE_WORD = re.compile(r"\w+")
_CONNECTORS = frozenset({"of", "the", "de", "du", "la", "von", "van", "der", "and", "for", "in", "on", "at", "&"})


def clean_name(phrase: str) -> str | None:
    """A name-like phrase without the function words around it, or None when nothing of a name is left
    (a lone stop word, a day or month name)."""
    words = phrase.split()
    while words and words[0].casefold() in _STOP and not (words[0].casefold() in _ORDINALS and len(words) > 1):
        words = words[1:]
    while words and words[-1].casefold() in _STOP:
        words = words[:-1]
    name = " ".join(words).strip(" .'-")
    if len(name) < 2 or name.casefold() in _STOP or name.casefold() in _CALENDAR:
        return None
    return name


def is_name_like(text: str) -> bool:
    """Whether a text (a document title) reads as a name: every word capitalised, a number or a
    function word ("2014 FIFA World Cup", "Arthur's Magazine", "Born to Run"), not a heading that
    describes ("People of the Harbor Hill story", "List of tallest buildings")."""
    words = text.split()
    return bool(words) and (words[0][:1].isupper() or words[0][:1].isdigit()) and all(
        w[:1].isupper() or w[:1].isdigit() or w.casefold() in _CONNECTORS or w.casefold() in _STOP for w in words)


def is_value(text: str) -> bool:
    """Whether a text is a bare date or number ("1986", "4 July 1776", "1990s", "6,960"; not "The 1975",
    a band): a value a statement is qualified by, not a name of a person, place or thing."""
    words = [w.casefold() for w in _VALUE_WORD.findall(text)]
    return bool(words) and any(ch.isdigit() for ch in text) and all(_value_word(w) for w in words)


def _value_word(word: str) -> bool:
    return (word.isdigit() or word in MONTHS or word in _VALUE_FILLER
            or bool(re.fullmatch(r"\d+(?:s|st|nd|rd|th)", word)))


def body_lines(text: str) -> str:
    """``text`` without its Markdown heading lines (a heading names a topic; the names in it recur in
    the body, and its other words make fragments such as "People of the Harbor Hill")."""
    return "\n".join("" if line.lstrip().startswith("#") else line for line in text.split("\n"))


def entities_in(sentence: str) -> list[str]:
    names: list[str] = []
    for match in _PHRASE.finditer(sentence):
        name = clean_name(match.group(0))
        if name and name not in names:
            names.append(name)
    for match in YEAR.finditer(sentence):
        if match.group(1) not in names:
            names.append(match.group(1))
    return names[:MAX_ENTITIES_PER_SENTENCE]
