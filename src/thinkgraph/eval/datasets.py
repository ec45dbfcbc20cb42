"""Question files. The native format is that of ../shared/data, one JSON object per line:
{"id", "question", "answer"?, "answer_aliases"?, "supporting_ids"?, "type"?}. Other benchmarks name
the same fields differently and are read through one alias table:

- GraphRAG-Bench: {"id", "question", "answer", "question_type" | "type"} (typed questions);
- UltraDomain / LightRAG-style abstract questions: {"query" | "input", ...} with no gold answer;
- GRBench (Graph-CoT): {"qid", "question", "answer", "level"}.

A file may also be one JSON array of such objects. A bad record is an error naming the file, the
line (or array position) and the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thinkgraph.errors import InputError
from thinkgraph.textfiles import read_text

# Field name -> the names other benchmarks use for it (first present wins).
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "qid", "_id", "question_id"),
    "question": ("question", "query", "input"),
    "answer": ("answer", "gold_answer"),
    "answer_aliases": ("answer_aliases", "answers", "aliases"),
    "supporting_ids": ("supporting_ids",),
    "type": ("type", "question_type", "level"),
}
_KNOWN = {name for names in FIELD_ALIASES.values() for name in names}


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    question: str
    answers: tuple[str, ...] = ()  # the gold answer first, then its aliases
    supporting_ids: tuple[str, ...] = ()
    type: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _field(record: dict[str, Any], name: str) -> Any:
    for alias in FIELD_ALIASES[name]:
        if record.get(alias) is not None:
            return record[alias]
    return None


def _records(file: Path) -> Iterator[tuple[str, Any]]:
    text = read_text(file, "a questions file (JSONL or a JSON array)")
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{file}:{exc.lineno}: malformed JSON ({exc.msg})") from exc
        for position, item in enumerate(items):
            yield f"{file}[{position}]", item
        return
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield f"{file}:{lineno}", json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{file}:{lineno}: malformed JSON ({exc.msg})") from exc


def parse_question(record: Any, where: str, default_id: str) -> Question:
    if not isinstance(record, dict):
        raise InputError(f"{where}: a question must be a JSON object")
    text = _field(record, "question")
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{where}: field 'question' is missing or empty")
    answer = _field(record, "answer")
    aliases = _field(record, "answer_aliases") or []
    if answer is not None and not isinstance(answer, str | int | float):
        raise InputError(f"{where}: field 'answer' must be text")
    if not isinstance(aliases, list):
        raise InputError(f"{where}: field 'answer_aliases' must be a list")
    support = _field(record, "supporting_ids") or []
    if not isinstance(support, list):
        raise InputError(f"{where}: field 'supporting_ids' must be a list")
    golds = [str(a) for a in ([answer] if answer is not None else []) + aliases]
    return Question(id=str(_field(record, "id") or default_id), question=text, answers=tuple(dict.fromkeys(golds)),
                    supporting_ids=tuple(str(s) for s in support), type=str(_field(record, "type") or ""),
                    extra={k: v for k, v in record.items() if k not in _KNOWN})


def load_questions(path: str | Path, limit: int | None = None) -> list[Question]:
    file = Path(path)
    if not file.is_file():
        raise InputError(f"questions file not found: {file}")
    out: list[Question] = []
    for where, record in _records(file):
        out.append(parse_question(record, where, default_id=f"q{len(out) + 1}"))
        if limit is not None and len(out) >= limit:
            break
    if not out:
        raise InputError(f"{file}: no questions in the file")
    ids = [q.id for q in out]
    if len(set(ids)) != len(ids):
        duplicate = next(i for i in ids if ids.count(i) > 1)
        raise InputError(f"{file}: question id {duplicate!r} occurs more than once")
    return out
