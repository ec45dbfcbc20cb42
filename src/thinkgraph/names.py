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


def clean_name(phrase: str) -> str | None:
    words = phrase.split()
    while words and words[0].casefold() in _STOP:
        words = words[1:]
    while words and words[-1].casefold() in _STOP:
        words = words[:-1]
    name = " ".join(words).strip(" .'-")
    if len(name) < 2 or name.casefold() in _STOP:
        return None
    return name


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
