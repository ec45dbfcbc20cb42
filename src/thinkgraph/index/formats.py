"""Documents beyond plain text: PDF (its text layer, one page after another, with the character
offset where each page starts, so citations can name pages), HTML (visible text, scripts and styles
dropped) and Markdown (its source, titled by its first heading); Word, PowerPoint, Excel, CSV, EPUB
and OpenDocument files through their converters (format_office, format_tables, format_books), with
the slides, sheets, chapters and sections a citation names. An empty, binary or image-only document
is an InputError naming the file, never a hang; a format whose package is missing is a NeedsExtra."""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from pathlib import PurePath

from thinkgraph.errors import InputError
from thinkgraph.index.convert import EmptyDocument, NotTextDocument, ParsedDocument
from thinkgraph.index.format_books import parse_epub, parse_odt
from thinkgraph.index.format_office import parse_docx, parse_pptx
from thinkgraph.index.format_tables import parse_csv, parse_ods, parse_xlsx

log = logging.getLogger(__name__)

PDF_SUFFIXES = {".pdf"}
HTML_SUFFIXES = {".html", ".htm"}
MARKDOWN_SUFFIXES = {".md", ".markdown"}
PAGE_SEPARATOR = "\n\n"
# The converted formats, by extension (the office extra's packages read all but CSV and TSV).
CONVERTERS: dict[str, Callable[[str, bytes], ParsedDocument]] = {
    ".docx": parse_docx, ".pptx": parse_pptx, ".xlsx": parse_xlsx, ".xlsm": parse_xlsx,
    ".csv": parse_csv, ".tsv": parse_csv, ".epub": parse_epub, ".odt": parse_odt, ".ods": parse_ods,
}
CONVERTED_SUFFIXES = frozenset(CONVERTERS)

__all__ = ["CONVERTED_SUFFIXES", "ParsedDocument", "page_of", "parse_document"]


def parse_document(name: str, data: bytes) -> ParsedDocument:
    suffix = PurePath(name).suffix.lower()
    if suffix in CONVERTERS:
        parsed = _converted(name, suffix, data)
    elif suffix in PDF_SUFFIXES or data.startswith(b"%PDF-"):
        parsed = parse_pdf(name, data)
    elif suffix in HTML_SUFFIXES:
        parsed = parse_html(_decode(name, data))
    elif suffix in MARKDOWN_SUFFIXES:
        parsed = parse_markdown(_decode(name, data))
    else:
        parsed = ParsedDocument(_decode(name, data))
    if not parsed.text.strip():
        raise EmptyDocument(f"{name}: no text found (empty document)")
    return parsed


def _converted(name: str, suffix: str, data: bytes) -> ParsedDocument:
    """A reader's failure on a file it cannot make sense of is that file's skip, not the run's end (the
    readers raise what their zip and XML layers raise; the traceback is logged)."""
    try:
        return CONVERTERS[suffix](name, data)
    except InputError:
        raise
    except Exception as exc:
        log.warning("reading %s failed", name, exc_info=True)
        raise InputError(f"{name}: unreadable {suffix} file ({type(exc).__name__}: {exc})") from exc


def _decode(name: str, data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise NotTextDocument(f"{name}: binary file, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotTextDocument(f"{name}: not UTF-8 (byte {exc.start})") from exc


def parse_pdf(name: str, data: bytes) -> ParsedDocument:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        raise InputError(f"{name}: unreadable PDF ({exc})") from exc
    if not any(pages):
        raise EmptyDocument(f"{name}: the PDF has no text layer ({len(pages)} pages; image-only or empty)")
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
