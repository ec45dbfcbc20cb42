"""Model-free extraction: proper-noun phrases and years as entities, sentence co-occurrence as links.

It lets an index be built with no LLM at all; its graph is coarser than an LLM's or OpenIE's.
"""

from __future__ import annotations

import re
from itertools import combinations

from thinkgraph.index.records import EntitySpec, Extraction, PropositionSpec
from thinkgraph.models import Chunk, SourceDocument

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|\n{2,}")
_CAP = r"[A-Z][\w'\-.]*[\w]|[A-Z]"
_CONNECT = r"(?:of|the|de|du|la|von|van|der)"
_PHRASE = re.compile(rf"\b(?:{_CAP})(?:\s+(?:{_CONNECT}\s+)*(?:{_CAP}))*")
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
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


def _clean(phrase: str) -> str | None:
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
        name = _clean(match.group(0))
        if name and name not in names:
            names.append(name)
    for match in _YEAR.finditer(sentence):
        if match.group(1) not in names:
            names.append(match.group(1))
    return names[:MAX_ENTITIES_PER_SENTENCE]


class NoLMExtractor:
    name = "nolm"
    uses_llm = False

    def __init__(self, *, sentence_propositions: bool = False) -> None:
        self.sentence_propositions = sentence_propositions

    async def extract(self, doc: SourceDocument, chunk: Chunk) -> Extraction:
        out = Extraction()
        seen: set[str] = set()
        title = _clean(doc.title.strip()) if doc.title else None
        if title and title[0].isupper():  # a name-like title (a file stem like "notes-2" is not)
            out.entities.append(EntitySpec(title))
            seen.add(title)
        for sentence in _SENTENCE.split(chunk.text):
            names = entities_in(sentence)
            for name in names:
                if name not in seen:
                    seen.add(name)
                    out.entities.append(EntitySpec(name))
            out.cooccurrences.extend(combinations(names, 2))
            if self.sentence_propositions and names:
                out.propositions.append(PropositionSpec(" ".join(sentence.split()), names))
        return out
