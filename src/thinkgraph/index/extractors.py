"""The extractor factory: an extractor by name (``[index] extractor`` or ``index -e``), with imported
OpenIE or triple files where given. One table of names, so an unknown name lists the valid ones."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from thinkgraph.errors import ConfigError
from thinkgraph.models import SourceDocument

if TYPE_CHECKING:
    from thinkgraph.config import IndexSettings
    from thinkgraph.index.extract_import import ImportedFacts, ImportExtractor
    from thinkgraph.index.extractor import Extractor
    from thinkgraph.llm.service import LLM

EXTRACTOR_NAMES = ("llm", "propositions", "import", "nolm", "spacy")


@dataclass
class ExtractorRequest:
    """What ``make_extractor`` builds from: the name, the settings, the model (for LLM extractors) and
    the files of precomputed facts."""

    settings: IndexSettings
    llm: LLM | None = None
    openie: str | Path | None = None
    triples: Sequence[str | Path] = field(default_factory=tuple)


def make_extractor(name: str | None, request: ExtractorRequest) -> Extractor:
    """``name`` (default: ``import`` with an OpenIE file, else the configured extractor). Triple files
    beside another extractor add their facts to its work (``CombinedExtractor``)."""
    from thinkgraph.index.extract_combined import CombinedExtractor

    name = name or ("import" if request.openie else request.settings.extractor)
    if request.triples and name != "import":
        triples_only = ExtractorRequest(request.settings, request.llm, None, request.triples)
        return CombinedExtractor(_imported(triples_only), make_extractor(name, _without_triples(request)))
    build = _BUILDERS.get(name)
    if build is None:
        raise ConfigError(f"unknown extractor {name!r}; valid extractors: {', '.join(EXTRACTOR_NAMES)}")
    return build(request)


def _without_triples(request: ExtractorRequest) -> ExtractorRequest:
    return ExtractorRequest(request.settings, request.llm, request.openie, ())


def _nolm(request: ExtractorRequest) -> Extractor:
    from thinkgraph.index.extract_nolm import NoLMExtractor

    return NoLMExtractor(sentence_propositions=request.settings.nolm_propositions,
                         title_links=request.settings.nolm_title_links)


def _spacy(request: ExtractorRequest) -> Extractor:
    from thinkgraph.index.extract_nolm import SpacyExtractor, require_spacy

    extractor = SpacyExtractor(sentence_propositions=request.settings.nolm_propositions,
                               title_links=request.settings.nolm_title_links)
    require_spacy(extractor.model)  # one line up front, as the LLM extractors without an endpoint
    return extractor


def _needs_llm(name: str, request: ExtractorRequest) -> LLM:
    if request.llm is None:
        raise ConfigError(f"extractor {name!r} needs an LLM endpoint (set THINKGRAPH_LLM_BASE_URL)")
    return request.llm


def _llm(request: ExtractorRequest) -> Extractor:
    from thinkgraph.index.extract_llm import LLMTripletExtractor

    return LLMTripletExtractor(_needs_llm("llm", request), max_triplets=request.settings.max_triplets_per_chunk)


def _propositions(request: ExtractorRequest) -> Extractor:
    from thinkgraph.index.extract_propositions import PropositionExtractor

    return PropositionExtractor(_needs_llm("propositions", request))


def _imported(request: ExtractorRequest) -> ImportExtractor:
    from thinkgraph.index.extract_import import ImportExtractor

    if not request.openie and not request.triples:
        raise ConfigError("extractor 'import' needs --openie FILE or --triples FILE")
    return ImportExtractor(load_facts(request.openie, request.triples))


_BUILDERS: dict[str, Callable[[ExtractorRequest], Extractor]] = {
    "llm": _llm, "propositions": _propositions, "import": _imported, "nolm": _nolm, "spacy": _spacy}


def load_facts(openie: str | Path | None, triples: Sequence[str | Path]) -> ImportedFacts:
    """The facts of an OpenIE file and of triple files, by document."""
    from thinkgraph.index.extract_import import ImportedFacts, load_openie, load_triple_file

    facts = load_openie(openie) if openie else ImportedFacts()
    for file in triples:
        extra = load_triple_file(file)
        for doc_id, ext in extra.by_doc.items():
            facts.by_doc.setdefault(doc_id, type(ext)()).triples.extend(ext.triples)
        facts.skipped.extend(extra.skipped)
    return facts


def imported_facts(ex: Extractor) -> ImportedFacts | None:
    """The facts an import (or combined) extractor carries, or None for the others."""
    from thinkgraph.index.extract_combined import CombinedExtractor
    from thinkgraph.index.extract_import import ImportExtractor

    return ex.facts if isinstance(ex, ImportExtractor | CombinedExtractor) else None


def triple_documents(ex: Extractor, triples: Sequence[str | Path]) -> list[SourceDocument]:
    """Triple files become documents of their own so their facts have provenance."""
    facts = imported_facts(ex)
    if facts is None or not triples:
        return []
    docs: list[SourceDocument] = []
    for doc_id, ext in facts.by_doc.items():
        if doc_id.startswith("triples:"):
            text = "\n".join(f"{t.subject} {t.predicate} {t.object}." for t in ext.triples)
            docs.append(SourceDocument(id=doc_id, title=doc_id.removeprefix("triples:"), text=text,
                                       source=doc_id.removeprefix("triples:")))
    return docs
