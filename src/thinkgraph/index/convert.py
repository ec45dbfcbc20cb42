"""The text a converted file (Word, PowerPoint, a spreadsheet, an e-book) becomes, built piece by piece
so that each slide, sheet, chapter or section, and each table row, knows its exact character offset.

The text reads as light Markdown, the structure the rest of thinkgraph already knows: headings are
``#`` lines (a citation does not pick a heading over a sentence, chunks keep them), list items and
table rows are ``- `` lines (each its own block, so a citation narrows to one row), paragraphs are
separated by a blank line. No emphasis marks are added: a quote is the converted text itself."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from thinkgraph.errors import InputError
from thinkgraph.models import Part


class EmptyDocument(InputError):
    """A file with no text to index (an empty document, an image-only PDF)."""


class NotTextDocument(InputError):
    """Bytes that are not UTF-8 text (binary data under a text extension)."""


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    text: str
    title: str | None = None
    page_starts: tuple[int, ...] = field(default_factory=tuple)  # PDF: offset of each page's first char
    parts: tuple[Part, ...] = field(default_factory=tuple)  # slides, sheets, chapters, sections

_SPACE = re.compile(r"[ \t\u00a0\u200b]+")
_BLANK_LINES = re.compile(r"\n\s*\n+")


def clean(text: str) -> str:
    """Runs of spaces and tabs to one space, blank lines within a piece to one line break."""
    lines = [_SPACE.sub(" ", line).strip() for line in _BLANK_LINES.sub("\n", text).splitlines()]
    return "\n".join(line for line in lines if line)


@dataclass
class _Open:
    start: int
    label: str
    rows: list[tuple[int, int]] = field(default_factory=list)


class TextBuilder:
    """Appends headings, paragraphs, list items and rows; ``parts`` start where ``part`` is called."""

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._length = 0
        self._last_kind = ""
        self._parts: list[Part] = []
        self._open: _Open | None = None
        self._page_starts: list[int] = []
        self._new_pages = 0  # pages that begin with the next piece (a long paragraph may fill more than one)

    def _add(self, text: str, kind: str) -> int | None:
        text = clean(text) if kind == "block" else " ".join(clean(text).split("\n"))
        if not text:
            return None
        if self._pieces:
            separator = "\n" if kind == "item" and self._last_kind == "item" else "\n\n"
            self._pieces.append(separator)
            self._length += len(separator)
        start = self._length
        self._pieces.append(text)
        self._length += len(text)
        self._last_kind = kind
        self._page_starts.extend([start] * self._new_pages)
        self._new_pages = 0
        return start

    def page_break(self, pages: int = 1) -> None:
        """What is added next starts a new page (a word processor's rendered page break); ``pages`` > 1
        when pages began and ended inside the piece before it."""
        if not self._page_starts:
            self._page_starts.append(0)
        self._new_pages += pages

    def part(self, label: str) -> None:
        """A new slide, sheet, chapter or section starts with what is added next."""
        self._close()
        self._open = _Open(-1, label)

    def heading(self, text: str, level: int = 1) -> None:
        self._mark(self._add(f"{'#' * max(1, min(level, 6))} {' '.join(clean(text).split())}", "heading")
                   if clean(text) else None)

    def paragraph(self, text: str) -> None:
        self._mark(self._add(text, "block"))

    def item(self, text: str) -> None:
        self._mark(self._add(f"- {text}" if clean(text) else "", "item"))

    def row(self, text: str, number: int) -> None:
        """A table row, numbered as in the file."""
        start = self._add(f"- {text}" if clean(text) else "", "item")
        self._mark(start)
        if start is not None and self._open is not None:
            self._open.rows.append((start, number))

    def _mark(self, start: int | None) -> None:
        if start is not None and self._open is not None and self._open.start < 0:
            self._open.start = start

    def _close(self) -> None:
        if self._open is not None and self._open.start >= 0:  # a part with no text is no place to cite
            self._parts.append(Part(self._open.start, self._open.label, tuple(self._open.rows)))
        self._open = None

    def document(self, title: str | None) -> ParsedDocument:
        self._close()
        return ParsedDocument("".join(self._pieces), title, tuple(self._page_starts), tuple(self._parts))
