"""The extractor contract shared by the LLM, import and model-free extractors."""

from __future__ import annotations

from typing import Protocol

from thinkgraph.index.records import Extraction
from thinkgraph.models import Chunk, SourceDocument


class Extractor(Protocol):
    name: str
    uses_llm: bool

    async def extract(self, doc: SourceDocument, chunk: Chunk) -> Extraction: ...
