"""Token-window chunking with character offsets kept for provenance."""

from __future__ import annotations

from thinkgraph.ids import chunk_id
from thinkgraph.models import Chunk, SourceDocument
from thinkgraph.tokens import TokenCounter


def chunk_document(doc: SourceDocument, counter: TokenCounter, *, size: int, overlap: int) -> list[Chunk]:
    """Windows of at most ``size`` tokens, each starting about ``size - overlap`` tokens after the
    previous one. A window ends and starts between words, not inside one: WordPiece splits a rare name
    into pieces ("Ilse Bergman" -> ..., "berg", "##man"), and a passage cut between them showed a reader
    "Ilse B". It backs off by at most half a window; a longer run of pieces is cut."""
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError("chunk size must be positive and overlap in [0, size)")
    spans = counter.offsets(doc.text)
    if not spans:
        return []

    def inside_word(i: int) -> bool:  # token i continues the word token i - 1 began
        at = spans[i][0]
        return 0 < i < len(spans) and spans[i - 1][1] == at and doc.text[at - 1].isalnum() and doc.text[at].isalnum()

    stride = size - overlap
    chunks: list[Chunk] = []
    start_tok = 0
    while True:
        end_tok = min(start_tok + size, len(spans))
        while end_tok < len(spans) and inside_word(end_tok) and end_tok - 1 > start_tok + size // 2:
            end_tok -= 1
        start, end = spans[start_tok][0], spans[end_tok - 1][1]
        text = doc.text[start:end]
        chunks.append(Chunk(id=chunk_id(text), doc_id=doc.id, text=text, start=start, end=end,
                            n_tokens=end_tok - start_tok, index=len(chunks)))
        if end_tok >= len(spans):
            return chunks
        following = min(start_tok + stride, end_tok)  # never past this window's end: no text left out
        while inside_word(following) and following - 1 > start_tok:
            following -= 1
        start_tok = following
