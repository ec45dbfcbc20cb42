"""E-books (.epub; ebooklib, the office extra) and OpenDocument text (.odt; odfpy, the office extra)
to text. An EPUB is read in its reading order (the spine), one part per chapter named by its table of
contents (or its first heading); its XHTML keeps headings, paragraphs, list items and table rows. An
ODT keeps headings (each starting a section), paragraphs, lists and tables in the body's order."""

from __future__ import annotations

import io
import zipfile
from typing import Any

from thinkgraph.errors import InputError
from thinkgraph.index.convert import ParsedDocument, TextBuilder, clean
from thinkgraph.index.extras import office_module

_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_BLOCKS = (*_HEADINGS, "p", "li", "pre", "blockquote", "tr", "dt", "dd", "figcaption")
OPEN_ERRORS = (zipfile.BadZipFile, KeyError, ValueError, OSError, AttributeError, TypeError, IndexError)


def _quoted(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return f"'{flat[:limit - 1]}…'" if len(flat) > limit else f"'{flat}'"


def _toc_titles(entries: Any, into: dict[str, str]) -> dict[str, str]:
    """href (without #fragment) -> title, from ebooklib's nested table of contents."""
    for entry in entries or ():
        if isinstance(entry, tuple | list):
            section, children = entry[0], entry[1] if len(entry) > 1 else ()
            _toc_titles([section], into)
            _toc_titles(children, into)
        elif getattr(entry, "href", None) and getattr(entry, "title", None):
            into.setdefault(entry.href.split("#")[0], entry.title)
    return into


def _html_blocks(builder: TextBuilder, soup: Any) -> None:
    for element in soup.find_all(_BLOCKS):
        if element.find_parent(_BLOCKS) is not None:  # said once, by its outermost block
            continue
        if element.name in _HEADINGS:
            builder.heading(element.get_text(" "), int(element.name[1]))
        elif element.name == "tr":
            builder.item(" | ".join(" ".join(c.get_text(" ").split()) for c in element.find_all(["td", "th"])))
        elif element.name in ("li", "dt", "dd"):
            builder.item(element.get_text(" "))
        else:
            builder.paragraph(element.get_text(" " if element.name != "pre" else ""))


def parse_epub(name: str, data: bytes) -> ParsedDocument:
    office_module("ebooklib", name)
    from bs4 import BeautifulSoup
    from ebooklib import ITEM_DOCUMENT, epub

    try:
        book = epub.read_epub(io.BytesIO(data), options={"ignore_ncx": False})
    except (epub.EpubException, *OPEN_ERRORS) as exc:
        raise InputError(f"{name}: unreadable EPUB ({type(exc).__name__}: {exc})") from exc
    titles = _toc_titles(book.toc, {})
    builder, chapter = TextBuilder(), 0
    for idref, _linear in book.spine:
        item = book.get_item_with_id(idref)
        if item is None or item.get_type() != ITEM_DOCUMENT or isinstance(item, epub.EpubNav):
            continue
        soup = BeautifulSoup(item.get_content(), "html.parser")
        for tag in soup(["script", "style"]):
            tag.decompose()
        if not clean((soup.body or soup).get_text(" ")):  # a cover image, a blank page
            continue
        chapter += 1
        heading = soup.find(_HEADINGS)
        named = titles.get(item.get_name()) or (heading.get_text(" ") if heading else "")
        builder.part(f"chapter {chapter} {_quoted(named)}" if named.strip() else f"chapter {chapter}")
        _html_blocks(builder, soup.body or soup)
    found = book.get_metadata("DC", "title")
    return builder.document(found[0][0] if found else None)


def _odf_walk(builder: TextBuilder, node: Any, teletype: Any) -> None:
    for child in node.childNodes:
        kind = getattr(child, "qname", (None, None))[1]
        if kind == "h":
            text = teletype.extractText(child)
            if text.strip():
                level = child.getAttribute("outlinelevel")
                builder.part(f"section {_quoted(text)}")
                builder.heading(text, int(level) if level and str(level).isdigit() else 1)
        elif kind == "p":
            builder.paragraph(teletype.extractText(child))
        elif kind == "list-item":
            for inner in child.childNodes:
                if getattr(inner, "qname", (None, None))[1] == "p":
                    builder.item(teletype.extractText(inner))
                else:
                    _odf_walk(builder, inner, teletype)
        elif kind == "table-row":
            builder.item(" | ".join(" ".join(teletype.extractText(c).split()) for c in child.childNodes
                                    if getattr(c, "qname", (None, None))[1] == "table-cell"))
        elif kind in ("list", "section", "table", "table-rows", "table-header-rows", "soft-page-break", "div"):
            _odf_walk(builder, child, teletype)


def parse_odt(name: str, data: bytes) -> ParsedDocument:
    office_module("odf", name)
    from odf import dc, teletype
    from odf.opendocument import load

    try:
        document = load(io.BytesIO(data))
    except Exception as exc:  # odfpy raises whatever its zip and XML readers raise
        raise InputError(f"{name}: unreadable OpenDocument file ({type(exc).__name__}: {exc})") from exc
    builder = TextBuilder()
    _odf_walk(builder, document.text, teletype)
    found = document.meta.getElementsByType(dc.Title)
    title = teletype.extractText(found[0]).strip() if found else ""
    return builder.document(title or None)
