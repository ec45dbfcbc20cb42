"""The extractor contract shared by the LLM, import and model-free extractors."""

from __future__ import annotations

from typing import Protocol

from thinkgraph.index.records import Extraction
from thinkgraph.models import Chunk, SourceDocument


class Extractor(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def uses_llm(self) -> bool: ...

    async def extract(self, doc: SourceDocument, chunk: Chunk) -> Extraction: ...
