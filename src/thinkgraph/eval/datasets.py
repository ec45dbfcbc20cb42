"""Question files in the format of ../shared/data: {"id", "question", "answer"?, "answer_aliases"?,
"supporting_ids"?, ...}. A bad line is an error naming the file, the line and the field."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thinkgraph.errors import InputError


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    question: str
    answers: tuple[str, ...] = ()  # the gold answer first, then its aliases
    supporting_ids: tuple[str, ...] = ()
    type: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def load_questions(path: str | Path, limit: int | None = None) -> list[Question]:
    file = Path(path)
    if not file.is_file():
        raise InputError(f"questions file not found: {file}")
    out: list[Question] = []
    for lineno, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{file}:{lineno}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}: malformed JSON ({exc.msg})") from exc
        if not isinstance(record, dict):
            raise InputError(f"{where}: a question must be a JSON object")
        text = record.get("question")
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{where}: field 'question' is missing or empty")
        answer = record.get("answer")
        aliases = record.get("answer_aliases") or []
        if answer is not None and not isinstance(answer, str | int | float):
            raise InputError(f"{where}: field 'answer' must be text")
        if not isinstance(aliases, list):
            raise InputError(f"{where}: field 'answer_aliases' must be a list")
        support = record.get("supporting_ids") or []
        if not isinstance(support, list):
            raise InputError(f"{where}: field 'supporting_ids' must be a list")
        answers = tuple(str(a) for a in ([answer] if answer is not None else []) + aliases)
        known = {"id", "question", "answer", "answer_aliases", "supporting_ids", "type", "question_type"}
        out.append(Question(id=str(record.get("id", f"q{lineno}")), question=text, answers=answers,
                            supporting_ids=tuple(str(s) for s in support),
                            type=str(record.get("type") or record.get("question_type") or ""),
                            extra={k: v for k, v in record.items() if k not in known}))
        if limit is not None and len(out) >= limit:
            break
    return out
