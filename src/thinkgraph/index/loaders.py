"""Loading documents from files and directories, with every file accounted for: each one is read or
skipped with its reason (``Skipped.kind`` says which kind of reason, for the report's counts).

From a folder, the files the include patterns take are read; any other file is skipped as an
unsupported type, one line each, except hidden files and folders (a name starting with ".": a
repository's .git holds thousands) and the files an --exclude or a narrower --include leaves out on
purpose, which are counted in one line per folder."""

from __future__ import annotations

import fnmatch
import json
import logging
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from thinkgraph.config import DEFAULT_INCLUDE
from thinkgraph.errors import InputError
from thinkgraph.index.convert import EmptyDocument, NotTextDocument
from thinkgraph.index.extras import NEEDS_EXTRA, NeedsExtra
from thinkgraph.index.formats import CONVERTED_SUFFIXES, HTML_SUFFIXES, MARKDOWN_SUFFIXES, PDF_SUFFIXES, parse_document
from thinkgraph.models import SourceDocument
from thinkgraph.textfiles import NotText, decode_text

log = logging.getLogger(__name__)

TEXT_SUFFIXES = {".txt", ".md", ".markdown"}
PARSED_SUFFIXES = PDF_SUFFIXES | HTML_SUFFIXES | MARKDOWN_SUFFIXES | CONVERTED_SUFFIXES
JSONL_SUFFIXES = {".jsonl"}
READ_SUFFIXES = " ".join(sorted(TEXT_SUFFIXES | PARSED_SUFFIXES | JSONL_SUFFIXES))

# Skipped.kind: why a file or record was not indexed (counted by kind in the report).
UNSUPPORTED, TOO_LARGE, EMPTY, NOT_TEXT = "unsupported type", "too large", "empty", "not text"
UNREADABLE, MALFORMED, LEFT_OUT, HIDDEN, DUPLICATE = "unreadable", "malformed record", "left out by a pattern", \
    "hidden", "duplicate"


@dataclass(frozen=True, slots=True)
class Skipped:
    source: str
    reason: str
    kind: str = UNREADABLE


def _too_large(path: Path, max_bytes: int) -> Skipped | None:
    size = path.stat().st_size
    return Skipped(str(path), f"too large ({size} bytes > {max_bytes})", TOO_LARGE) if size > max_bytes else None


def _read_text(path: Path, max_bytes: int) -> str | Skipped:
    if (large := _too_large(path, max_bytes)) is not None:
        return large
    try:
        text = decode_text(path.read_bytes())
    except NotText as exc:
        return Skipped(str(path), str(exc), NOT_TEXT)
    if not text.strip():
        return Skipped(str(path), "empty", EMPTY)
    return text


def _markdown_title(text: str) -> str | None:
    for line in text.splitlines()[:20]:
        if line.startswith("# "):
            return line[2:].strip()
    return None


def _kind_of(exc: InputError) -> str:
    if isinstance(exc, NeedsExtra):
        return NEEDS_EXTRA
    if isinstance(exc, EmptyDocument):
        return EMPTY
    return NOT_TEXT if isinstance(exc, NotTextDocument) else UNREADABLE


def _load_parsed_file(path: Path, doc_id: str, max_bytes: int) -> Iterator[SourceDocument | Skipped]:
    if (large := _too_large(path, max_bytes)) is not None:
        yield large
        return
    try:
        parsed = parse_document(path.name, path.read_bytes())
    except InputError as exc:
        yield Skipped(str(path), str(exc).removeprefix(f"{path.name}: "), _kind_of(exc))
        return
    yield SourceDocument(id=doc_id, title=parsed.title or path.stem, text=parsed.text, source=str(path),
                         page_starts=parsed.page_starts, parts=parsed.parts)


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
            yield Skipped(where, f"malformed JSON ({exc.msg})", MALFORMED)
            continue
        if not isinstance(record, dict):
            yield Skipped(where, "line is not a JSON object", MALFORMED)
            continue
        text = record.get("text")
        if not isinstance(text, str) or not text.strip():
            yield Skipped(where, "missing or empty field 'text'", MALFORMED)
            continue
        doc_id = str(record.get("id") or f"{path.stem}:{lineno}")
        title = str(record.get("title") or "")
        yield SourceDocument(id=doc_id, title=title, text=text, source=where)


def _matches(name: str, rel: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) for p in patterns)


def _unsupported(path: Path) -> Skipped:
    what = repr(path.suffix.lower()) if path.suffix else "(no extension)"
    return Skipped(str(path), f"unsupported file type {what} (read: {READ_SUFFIXES})", UNSUPPORTED)


def _load_folder(root: Path, include: Sequence[str], exclude: Sequence[str], max_bytes: int,
                 index_file: Path | None) -> Iterator[SourceDocument | Skipped]:
    default_include = tuple(include) == DEFAULT_INCLUDE
    quiet: Counter[str] = Counter()  # files not read on purpose: counted per folder, not listed
    own = str(index_file.resolve()) if index_file is not None else None  # the index, its journal, its .kg folder
    files = sorted(p for p in root.rglob("*") if p.is_file() and not (own and str(p.resolve()).startswith(own)))
    for path in files:
        rel = path.relative_to(root).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            quiet[HIDDEN] += 1
        elif _matches(path.name, rel, exclude) or not (default_include or _matches(path.name, rel, include)):
            quiet[LEFT_OUT] += 1
        elif not _matches(path.name, rel, include):  # the default patterns: every format thinkgraph reads
            yield _unsupported(path)
        else:
            yield from _load_file(path, rel, max_bytes, explicit=False)
    if not files:
        yield Skipped(str(root), "no files in this folder", EMPTY)
    if quiet[HIDDEN]:
        yield Skipped(str(root), f"{quiet[HIDDEN]} hidden file(s) not read (a name starting with '.')", HIDDEN)
    if quiet[LEFT_OUT]:
        yield Skipped(str(root), f"{quiet[LEFT_OUT]} file(s) left out by --include/--exclude", LEFT_OUT)


def load_paths(
    paths: Sequence[str | Path],
    *,
    include: Sequence[str] = DEFAULT_INCLUDE,
    exclude: Sequence[str] = (),
    max_bytes: int = 20_000_000,
    index_file: Path | None = None,
) -> Iterator[SourceDocument | Skipped]:
    """Documents from files and directories (recursive). Document ids are paths relative to the
    directory given (a file given directly is known by its name); jsonl records keep their ids.
    ``index_file``: the SQLite index being written, whose files a folder may hold (never read)."""
    for given in paths:
        root = Path(given)
        if not root.exists():
            raise InputError(f"no such file or directory: {root}")
        if root.is_file():
            yield from _load_file(root, root.name, max_bytes, explicit=True)
        elif root.is_dir():
            yield from _load_folder(root, include, exclude, max_bytes, index_file)
        else:  # a device, pipe or socket: never read (a pipe would wait for a writer)
            yield Skipped(str(root), "not a file or folder (a device, pipe or socket)", UNSUPPORTED)


def _load_file(path: Path, doc_id: str, max_bytes: int, *, explicit: bool) -> Iterator[SourceDocument | Skipped]:
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        yield from _load_jsonl(path, max_bytes)
    elif suffix in PARSED_SUFFIXES:
        yield from _load_parsed_file(path, doc_id, max_bytes)
    elif suffix in TEXT_SUFFIXES or not explicit:
        yield from _load_text_file(path, doc_id, max_bytes)
    else:
        yield _unsupported(path)
