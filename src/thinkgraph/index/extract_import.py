"""Import of precomputed facts: OpenIE JSONL (HippoRAG format) and triple files (TSV/CSV)."""

from __future__ import annotations

import csv
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from thinkgraph.errors import InputError
from thinkgraph.index.records import EntitySpec, Extraction, TripleSpec
from thinkgraph.models import Chunk, SourceDocument
from thinkgraph.textfiles import text_lines

log = logging.getLogger(__name__)


@dataclass(slots=True)
class ImportedFacts:
    by_doc: dict[str, Extraction] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # "file:line: reason"


def _triple(raw: object) -> TripleSpec | None:
    if not isinstance(raw, list | tuple) or len(raw) != 3:
        return None
    if not all(isinstance(x, str) and x.strip() for x in raw):
        return None
    return TripleSpec(raw[0].strip(), raw[1].strip(), raw[2].strip())


def load_openie(path: str | Path) -> ImportedFacts:
    """``{"doc_id", "entities": [...], "triples": [[s, r, o], ...]}`` per line; bad lines and bad
    triples are skipped and listed."""
    file = Path(path)
    facts = ImportedFacts()
    for lineno, line in enumerate(text_lines(file, "an OpenIE JSONL file"), start=1):
        if not line.strip():
            continue
        where = f"{file}:{lineno}"
        try:
            record = json.loads(line)
            doc_id = record["doc_id"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            facts.skipped.append(f"{where}: malformed record ({type(exc).__name__})")
            continue
        if not isinstance(doc_id, str | int) or isinstance(doc_id, bool) or not str(doc_id).strip():
            facts.skipped.append(f"{where}: doc_id must be a text or number")
            continue
        ext = facts.by_doc.setdefault(str(doc_id), Extraction())
        entities, triples = record.get("entities") or [], record.get("triples") or []
        if not isinstance(entities, list) or not isinstance(triples, list):
            facts.skipped.append(f"{where}: entities and triples must be lists")
            continue
        ext.entities.extend(EntitySpec(n.strip()) for n in entities if isinstance(n, str) and n.strip())
        for raw in triples:
            triple = _triple(raw)
            if triple is None:
                facts.skipped.append(f"{where}: bad triple {raw!r:.80}")
                continue
            ext.triples.append(triple)
    _require_some(facts, file)
    return facts


def _require_some(facts: ImportedFacts, file: Path) -> None:
    """A file from which nothing at all could be taken is bad input, not an empty import."""
    if not any(e.triples or e.entities for e in facts.by_doc.values()):
        first = f" (first problem: {facts.skipped[0]})" if facts.skipped else ""
        raise InputError(f"{file}: no usable entity or triple{first}")
    if facts.skipped:
        log.warning("%d records or triples skipped in %s", len(facts.skipped), file)


def load_triple_file(path: str | Path) -> ImportedFacts:
    """Rows ``subject, predicate, object[, doc_id]`` (tab-separated for .tsv, comma for .csv); a
    header row naming 'subject' is skipped; rows without doc_id belong to the file's own document."""
    file = Path(path)
    delimiter = "\t" if file.suffix.lower() in {".tsv", ".tab"} else ","
    facts = ImportedFacts()
    default_doc = f"triples:{file.name}"
    rows = csv.reader(text_lines(file, "a triple file (TSV/CSV)"), delimiter=delimiter)
    try:
        for lineno, row in enumerate(rows, start=1):
            if not row or (lineno == 1 and row[0].strip().casefold() == "subject"):
                continue
            triple = _triple(row[:3]) if len(row) in (3, 4) else None
            if triple is None:
                facts.skipped.append(f"{file}:{lineno}: expected 3 or 4 non-empty fields")
                continue
            doc_id = row[3].strip() if len(row) == 4 and row[3].strip() else default_doc
            facts.by_doc.setdefault(doc_id, Extraction()).triples.append(triple)
    except csv.Error as exc:
        raise InputError(f"{file}: not a readable {delimiter!r}-separated file ({exc})") from None
    _require_some(facts, file)
    return facts


class ImportExtractor:
    """Hands each chunk the imported facts of its document whose subject or object occurs in the
    chunk; when a document has one chunk (or no mention is found) the first chunk takes them."""

    name = "import"
    uses_llm = False

    def __init__(self, facts: ImportedFacts) -> None:
        self.facts = facts

    async def extract(self, doc: SourceDocument, chunk: Chunk) -> Extraction:
        ext = self.facts.by_doc.get(doc.id)
        if ext is None:
            return Extraction()
        if chunk.index == 0 and chunk.end >= len(doc.text):
            return ext
        text = chunk.text.casefold()

        def here(name: str) -> bool:
            return name.casefold() in text

        def unplaced(name: str) -> bool:
            return chunk.index == 0 and name.casefold() not in doc.text.casefold()

        return Extraction(
            entities=[e for e in ext.entities if here(e.name) or unplaced(e.name)],
            triples=[t for t in ext.triples if here(t.subject) or here(t.object)
                     or (unplaced(t.subject) and unplaced(t.object))],
        )
