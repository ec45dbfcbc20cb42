"""Documents indexed from a folder whose files are gone: `thinkgraph index FOLDER` reads what is there
and never deletes, so a deleted file's document stays in the index (and in answers) until removed.
The command says so, with the `remove` command to run; it removes nothing itself."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path

from thinkgraph.api import DEFAULT_INDEX
from thinkgraph.models import DocumentRecord

MAX_IDS_IN_COMMAND = 20  # more, and the hint names the count and how to list them
_JSONL_RECORD = re.compile(r"(.+):(\d+)")  # a JSON Lines record's source: FILE:LINE


def _source_file(source: str) -> Path:
    path = Path(source)
    record = _JSONL_RECORD.fullmatch(source)
    return Path(record.group(1)) if record and not path.exists() else path


def vanished_documents(documents: Iterable[DocumentRecord], paths: Sequence[Path]) -> list[DocumentRecord]:
    """The documents whose source file lay in one of the folders among ``paths`` and exists no more."""
    folders = [p.resolve() for p in paths if p.is_dir()]
    if not folders:
        return []
    gone = []
    for doc in documents:
        source = _source_file(doc.source)
        if not source.exists() and any(source.resolve().is_relative_to(f) for f in folders):
            gone.append(doc)
    return gone


def vanished_hint(gone: Sequence[DocumentRecord], index: str, config: Path | None) -> str:
    """One line: how many documents lost their file, and the command that removes them."""
    ids = [d.id for d in gone]
    options = "" if index == DEFAULT_INDEX else f" --index {shlex.quote(index)}"
    options += f" --config {shlex.quote(str(config))}" if config is not None else ""
    shown = " ".join(shlex.quote(i) for i in ids[:MAX_IDS_IN_COMMAND])
    command = f"thinkgraph{options} remove {shown}"
    more = (f" (the first {MAX_IDS_IN_COMMAND}; `thinkgraph{options} documents` lists all)"
            if len(ids) > MAX_IDS_IN_COMMAND else "")
    return (f"hint: {len(ids)} indexed document(s) come from files that are gone from the folder; they stay in "
            f"the index until removed: {command}{more}")
