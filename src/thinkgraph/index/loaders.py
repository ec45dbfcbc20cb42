"""Loading documents from .txt, .md, .jsonl files and directories, with counted skips."""

from __future__ import annotations

import fnmatch
import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from thinkgraph.config import DEFAULT_INCLUDE
from thinkgraph.errors import InputError
from thinkgraph.index.formats import HTML_SUFFIXES, MARKDOWN_SUFFIXES, PDF_SUFFIXES, parse_document
from thinkgraph.models import SourceDocument
from thinkgraph.textfiles import NotText, decode_text

log = logging.getLogger(__name__)

TEXT_SUFFIXES = {".txt", ".md", ".markdown"}
PARSED_SUFFIXES = PDF_SUFFIXES | HTML_SUFFIXES | MARKDOWN_SUFFIXES
JSONL_SUFFIXES = {".jsonl"}


@dataclass(frozen=True, slots=True)
class Skipped:
    source: str
    reason: str


def _read_text(path: Path, max_bytes: int) -> str | Skipped:
    size = path.stat().st_size
    if size > max_bytes:
        return Skipped(str(path), f"too large ({size} bytes > {max_bytes})")
    try:
        text = decode_text(path.read_bytes())
    except NotText as exc:
        return Skipped(str(path), str(exc))
    if not text.strip():
        return Skipped(str(path), "empty")
    return text


def _markdown_title(text: str) -> str | None:
    for line in text.splitlines()[:20]:
        if line.startswith("# "):
            return line[2:].strip()
    return None


def _load_parsed_file(path: Path, doc_id: str, max_bytes: int) -> Iterator[SourceDocument | Skipped]:
    size = path.stat().st_size
    if size > max_bytes:
        yield Skipped(str(path), f"too large ({size} bytes > {max_bytes})")
        return
    try:
        parsed = parse_document(path.name, path.read_bytes())
    except InputError as exc:
        yield Skipped(str(path), str(exc).removeprefix(f"{path.name}: "))
        return
    yield SourceDocument(id=doc_id, title=parsed.title or path.stem, text=parsed.text, source=str(path),
                         page_starts=parsed.page_starts)


def _load_text_file(path: Path, doc_id: str, max_bytes: int) -> Iterator[SourceDocument | Skipped]:
    text = _read_text(path, max_bytes)
    if isinstance(text, Skipped):
        yield text
        return
    title = _markdown_title(text) if path.suffix.lower() != ".txt" else None
    yield SourceDocument(id=doc_id, title=title or path.stem, text=text, source=str(path))


def _load_jsonl(path: Path, max_bytes: int) -> Iterator[SourceDocument | Skipped]:
    """One document per line: {"id", "title"?, "text"}; a bad line is skipped with file and line."""
    raw = _read_text(path, max_bytes)
    if isinstance(raw, Skipped):
        yield raw
        return
    for lineno, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield Skipped(where, f"malformed JSON ({exc.msg})")
            continue
        if not isinstance(record, dict):
            yield Skipped(where, "line is not a JSON object")
            continue
        text = record.get("text")
        if not isinstance(text, str) or not text.strip():
            yield Skipped(where, "missing or empty field 'text'")
            continue
        doc_id = str(record.get("id") or f"{path.stem}:{lineno}")
        title = str(record.get("title") or "")
        yield SourceDocument(id=doc_id, title=title, text=text, source=where)


def _matches(name: str, rel: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) for p in patterns)


def load_paths(
    paths: Sequence[str | Path],
    *,
    include: Sequence[str] = DEFAULT_INCLUDE,
    exclude: Sequence[str] = (),
    max_bytes: int = 20_000_000,
) -> Iterator[SourceDocument | Skipped]:
    """Documents from files and directories (recursive). Document ids are paths relative to the
    directory given (a file given directly is known by its name); jsonl records keep their ids."""
    for given in paths:
        root = Path(given)
        if not root.exists():
            raise InputError(f"no such file or directory: {root}")
        if root.is_file():
            yield from _load_file(root, root.name, max_bytes, explicit=True)
            continue
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = path.relative_to(root).as_posix()
            if not _matches(path.name, rel, include) or _matches(path.name, rel, exclude):
                continue
            yield from _load_file(path, rel, max_bytes, explicit=False)


def _load_file(path: Path, doc_id: str, max_bytes: int, *, explicit: bool) -> Iterator[SourceDocument | Skipped]:
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        yield from _load_jsonl(path, max_bytes)
    elif suffix in PARSED_SUFFIXES:
        yield from _load_parsed_file(path, doc_id, max_bytes)
    elif suffix in TEXT_SUFFIXES or not explicit:
        yield from _load_text_file(path, doc_id, max_bytes)
    else:
        yield Skipped(str(path), f"unsupported file type {suffix or path.name!r} (use .txt .md .html .pdf .jsonl)")
