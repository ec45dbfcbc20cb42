"""Token-window chunking with character offsets kept for provenance."""

from __future__ import annotations

from thinkgraph.ids import chunk_id
from thinkgraph.models import Chunk, SourceDocument
from thinkgraph.tokens import TokenCounter


def chunk_document(doc: SourceDocument, counter: TokenCounter, *, size: int, overlap: int) -> list[Chunk]:
    """Windows of ``size`` tokens, each starting ``size - overlap`` tokens after the previous one."""
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError("chunk size must be positive and overlap in [0, size)")
    spans = counter.offsets(doc.text)
    if not spans:
        return []
    stride = size - overlap
    chunks: list[Chunk] = []
    start_tok = 0
    while True:
        end_tok = min(start_tok + size, len(spans))
        start, end = spans[start_tok][0], spans[end_tok - 1][1]
        text = doc.text[start:end]
        chunks.append(Chunk(id=chunk_id(text), doc_id=doc.id, text=text, start=start, end=end,
                            n_tokens=end_tok - start_tok, index=len(chunks)))
        if end_tok >= len(spans):
            return chunks
        start_tok += stride
