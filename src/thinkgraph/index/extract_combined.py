"""Imported triples alongside another extractor: a document the triple file names takes its imported
facts; every other document goes to the configured extractor (``index docs/ --triples kg.tsv`` adds
the file's facts to what the extractor finds, it does not replace the extractor)."""

from __future__ import annotations

from dataclasses import dataclass

from thinkgraph.index.extract_import import ImportedFacts, ImportExtractor
from thinkgraph.index.extractor import Extractor
from thinkgraph.index.records import Extraction
from thinkgraph.models import Chunk, SourceDocument


@dataclass
class CombinedExtractor:
    imported: ImportExtractor
    base: Extractor

    @property
    def name(self) -> str:
        return f"{self.base.name}+import"

    @property
    def uses_llm(self) -> bool:
        return self.base.uses_llm

    @property
    def facts(self) -> ImportedFacts:
        return self.imported.facts

    async def extract(self, doc: SourceDocument, chunk: Chunk) -> Extraction:
        if doc.id in self.imported.facts.by_doc:
            return await self.imported.extract(doc, chunk)
        return await self.base.extract(doc, chunk)
