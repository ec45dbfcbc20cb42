"""Word (.docx) and PowerPoint (.pptx) files to text, with python-docx and python-pptx (the office
extra). Word: headings as ``#`` lines, each heading starting a section a citation names, list
paragraphs and table rows as items, in the body's order; pages where the file records them (Word
writes where each page began when it last laid the document out; a file without them has no pages,
rather than guessed ones). PowerPoint: one part per slide (its title a heading, its text frames,
tables and grouped shapes top to bottom, its speaker notes last)."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from typing import Any

from thinkgraph.errors import InputError
from thinkgraph.index.convert import ParsedDocument, TextBuilder
from thinkgraph.index.extras import office_module

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
OPEN_ERRORS = (zipfile.BadZipFile, KeyError, ValueError, OSError, AttributeError, TypeError)


def _quoted(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return f"'{flat[:limit - 1]}…'" if len(flat) > limit else f"'{flat}'"


def _heading_level(paragraph: Any) -> int | None:
    name = (paragraph.style.name if paragraph.style is not None else "") or ""
    if name.lower() == "title":
        return 1
    match = _HEADING_STYLE.match(name)
    return int(match.group(1)) if match else None


def _is_list(paragraph: Any) -> bool:
    name = (paragraph.style.name if paragraph.style is not None else "") or ""
    properties = paragraph._p.pPr
    return name.lower().startswith("list") or (properties is not None and properties.numPr is not None)


def _table_rows(table: Any) -> Iterator[str]:
    for row in table.rows:
        cells, seen = [], set()
        for cell in row.cells:  # a merged cell comes back once per grid column it spans
            if id(cell._tc) not in seen:
                seen.add(id(cell._tc))
                cells.append(" ".join(cell.text.split()))
        if any(cells):
            yield " | ".join(cells)


def parse_docx(name: str, data: bytes) -> ParsedDocument:
    docx = office_module("docx", name)
    try:
        document = docx.Document(io.BytesIO(data))
        blocks = list(document.iter_inner_content())
    except OPEN_ERRORS as exc:
        raise InputError(f"{name}: unreadable Word file ({type(exc).__name__}: {exc})") from exc
    builder, title = TextBuilder(), document.core_properties.title or None
    for block in blocks:
        if hasattr(block, "rows"):  # a table
            for line in _table_rows(block):
                builder.item(line)
            continue
        text, level = block.text, _heading_level(block)
        starts_page, pages_inside = _page_breaks(block)
        if starts_page:
            builder.page_break()
        if level is not None and text.strip():
            builder.part(f"section {_quoted(text)}")
            builder.heading(text, level)
            title = title or " ".join(text.split())
        elif _is_list(block):
            builder.item(text)
        else:
            builder.paragraph(text)
        if pages_inside:
            builder.page_break(pages_inside)
    return builder.document(title)


def _page_breaks(paragraph: Any) -> tuple[bool, int]:
    """Whether a page begins with the paragraph, and how many begin inside it (those are counted from
    the next block on: a quote from the paragraph is given the page where the paragraph starts)."""
    breaks = paragraph.rendered_page_breaks
    before = breaks[0].preceding_paragraph_fragment if breaks else None  # (None: the break comes first)
    at_start = bool(breaks) and (before is None or not before.text.strip())
    return at_start, len(breaks) - at_start


def _shapes_in_order(shapes: Any) -> list[Any]:
    return sorted(shapes, key=lambda s: ((s.top or 0), (s.left or 0)))


def _slide_shape(builder: TextBuilder, shape: Any) -> None:
    if getattr(shape, "shape_type", None) is not None and hasattr(shape, "shapes"):  # a group
        for inner in _shapes_in_order(shape.shapes):
            _slide_shape(builder, inner)
    elif getattr(shape, "has_table", False) and shape.has_table:
        for row in shape.table.rows:
            cells = [" ".join(cell.text.split()) for cell in row.cells]
            if any(cells):
                builder.item(" | ".join(cells))
    elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        for paragraph in shape.text_frame.paragraphs:
            builder.item("".join(run.text for run in paragraph.runs) or paragraph.text)


def parse_pptx(name: str, data: bytes) -> ParsedDocument:
    pptx = office_module("pptx", name)
    try:
        deck = pptx.Presentation(io.BytesIO(data))
        slides = list(deck.slides)
    except OPEN_ERRORS as exc:
        raise InputError(f"{name}: unreadable PowerPoint file ({type(exc).__name__}: {exc})") from exc
    builder, title = TextBuilder(), deck.core_properties.title or None
    for number, slide in enumerate(slides, start=1):
        builder.part(f"slide {number}")
        heading = slide.shapes.title
        heading_text = heading.text_frame.text if heading is not None and heading.has_text_frame else ""
        if heading_text.strip():
            builder.heading(heading_text, 2)
            title = title or " ".join(heading_text.split())
        for shape in _shapes_in_order(slide.shapes):
            if heading is None or shape.shape_id != heading.shape_id:
                _slide_shape(builder, shape)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text
            if notes.strip():
                builder.paragraph(f"Notes: {notes}")
    return builder.document(title)
