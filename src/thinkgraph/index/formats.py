"""Documents beyond plain text: PDF (its text layer, one page after another, with the character
offset where each page starts, so citations can name pages), HTML (visible text, scripts and styles
dropped) and Markdown (its source, titled by its first heading). An empty, binary or image-only document is an
InputError naming the file, never a hang."""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass, field
from pathlib import PurePath

from thinkgraph.errors import InputError

log = logging.getLogger(__name__)

PDF_SUFFIXES = {".pdf"}
HTML_SUFFIXES = {".html", ".htm"}
MARKDOWN_SUFFIXES = {".md", ".markdown"}
PAGE_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    text: str
    title: str | None = None
    page_starts: tuple[int, ...] = field(default_factory=tuple)  # PDF: offset of each page's first char


def parse_document(name: str, data: bytes) -> ParsedDocument:
    suffix = PurePath(name).suffix.lower()
    if suffix in PDF_SUFFIXES or data.startswith(b"%PDF-"):
        parsed = parse_pdf(name, data)
    elif suffix in HTML_SUFFIXES:
        parsed = parse_html(_decode(name, data))
    elif suffix in MARKDOWN_SUFFIXES:
        parsed = parse_markdown(_decode(name, data))
    else:
        parsed = ParsedDocument(_decode(name, data))
    if not parsed.text.strip():
        raise InputError(f"{name}: no text found (empty document)")
    return parsed


def _decode(name: str, data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise InputError(f"{name}: binary file, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 (byte {exc.start})") from exc


def parse_pdf(name: str, data: bytes) -> ParsedDocument:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        raise InputError(f"{name}: unreadable PDF ({exc})") from exc
    if not any(pages):
        raise InputError(f"{name}: the PDF has no text layer ({len(pages)} pages; image-only or empty)")
    starts, text = [], ""
    for page in pages:
        starts.append(len(text))
        text += page + PAGE_SEPARATOR
    title = (reader.metadata.title if reader.metadata and reader.metadata.title else None)
    return ParsedDocument(text.rstrip(), title, tuple(starts))


def parse_html(markup: str) -> ParsedDocument:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(markup, "html.parser")
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    title = soup.title.get_text(strip=True) if soup.title else None
    heading = soup.find("h1")
    if soup.title:
        soup.title.decompose()
    lines = [line.strip() for line in soup.get_text("\n").splitlines()]
    return ParsedDocument("\n".join(line for line in lines if line), title or (heading.get_text(strip=True)
                                                                                if heading else None))


def parse_markdown(source: str) -> ParsedDocument:
    """Markdown keeps its source text, so that citation spans point into the file a reader opens; the
    parser finds the title (the first level-1 heading, in either syntax)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(source)
    title = next((tokens[i + 1].content for i, t in enumerate(tokens[:-1])
                  if t.type == "heading_open" and t.tag == "h1"), None)
    return ParsedDocument(source, title)


def page_of(page_starts: list[int] | tuple[int, ...], offset: int) -> int | None:
    """The 1-based page that holds character ``offset``; None for documents without pages."""
    if not page_starts:
        return None
    page = 0
    for i, start in enumerate(page_starts):
        if start <= offset:
            page = i
    return page + 1
