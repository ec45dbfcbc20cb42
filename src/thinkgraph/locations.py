"""Where a span of a converted document lies in the file it came from: the slide, sheet and rows,
chapter or section that a reader opens to find a quote (``Part``s, kept on the document's node), or
the page of a PDF. Stored on a node as plain JSON (``parts_to_props``) and read back here."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from thinkgraph.models import Part

PARTS_PROP = "parts"  # the document node's property that holds its parts


def parts_to_props(parts: Sequence[Part]) -> list[dict[str, Any]]:
    return [{"start": p.start, "label": p.label, **({"rows": [list(r) for r in p.rows]} if p.rows else {})}
            for p in parts]


def parts_from_props(raw: object) -> list[Part]:
    """The parts a node keeps; anything malformed (an index written by hand) reads as none."""
    if not isinstance(raw, list):
        return []
    parts = []
    for item in raw:
        if isinstance(item, dict) and isinstance(item.get("start"), int) and isinstance(item.get("label"), str):
            rows = tuple((int(r[0]), int(r[1])) for r in item.get("rows") or () if isinstance(r, list) and len(r) == 2)
            parts.append(Part(item["start"], item["label"], rows))
    return parts


def _at(starts: Sequence[int], offset: int) -> int | None:
    """The index of the last start at or before ``offset``; None before the first."""
    i = bisect_right(starts, offset) - 1
    return i if i >= 0 else None


def _rows(part: Part, start: int, end: int) -> str | None:
    offsets = [r[0] for r in part.rows]
    first, last = _at(offsets, start), _at(offsets, max(start, end - 1))
    if first is None and last is None:  # the span is the table's heading, before its first row
        return None
    low = part.rows[first if first is not None else 0][1]
    high = part.rows[last if last is not None else 0][1]
    return f"row {low}" if low == high else f"rows {low}-{high}"


def location(parts: Sequence[Part], start: int, end: int) -> str | None:
    """"slide 3", "sheet 'Sales', rows 4-6", "chapters 1-2": where characters ``start``-``end`` of the
    document's text lie; None for a document without parts or a span before the first one."""
    first = _at([p.start for p in parts], start)
    last = _at([p.start for p in parts], max(start, end - 1))
    if first is None or last is None:
        return None
    part = parts[first]
    if first != last:
        return f"{part.label or 'start'} to {parts[last].label or 'end'}"
    rows = _rows(part, start, end) if part.rows else None
    return ", ".join(x for x in (part.label, rows) if x) or None


def page_location(page_starts: Sequence[int], start: int, end: int) -> str | None:
    """"page 4" or "pages 4-5" for a span of a paged document (PDF)."""
    first, last = _at(page_starts, start), _at(page_starts, max(start, end - 1))
    if first is None or last is None:
        return None
    return f"page {first + 1}" if first == last else f"pages {first + 1}-{last + 1}"


def place(parts: Sequence[Part], page_starts: Sequence[int], start: int, end: int) -> str | None:
    """The page (where the file records pages) and the part: "page 3, section 'Results'"."""
    found = (page_location(page_starts, start, end) if page_starts else None,
             location(parts, start, end) if parts else None)
    return ", ".join(x for x in found if x) or None
