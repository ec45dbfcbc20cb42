"""Lenient extraction of JSON from model replies: think blocks, code fences, prose around the
object, trailing commas and smart quotes. Pure functions; a failure says what went wrong."""

from __future__ import annotations

import json
import re
from typing import Any

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_SMART = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


class JSONExtractionError(ValueError):
    pass


def strip_reasoning(text: str) -> str:
    """Remove <think>…</think> blocks that reasoning models emit before the answer."""
    return _THINK.sub("", text).strip()


def _balanced_candidates(text: str) -> list[str]:
    """Substrings that start at an opening brace/bracket and end at its balanced closing one."""
    found: list[str] = []
    for start, char in enumerate(text):
        if char not in "{[":
            continue
        stack: list[str] = []
        in_string = escape = False
        for pos in range(start, len(text)):
            c = text[pos]
            if in_string:
                if escape:
                    escape = False
                elif c == "\\":
                    escape = True
                elif c == '"':
                    in_string = False
                continue
            if c == '"':
                in_string = True
            elif c in "{[":
                stack.append("}" if c == "{" else "]")
            elif c in "}]":
                if not stack or stack.pop() != c:
                    break
                if not stack:
                    found.append(text[start:pos + 1])
                    break
        if found:
            break
    return found


def _loads(candidate: str) -> Any:
    for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate.translate(_SMART))):
        try:
            value = json.loads(attempt)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict | list):  # a bare string or number is not a structured reply
            return value
    raise JSONExtractionError("invalid JSON")


def extract_json(text: str) -> Any:
    """The first JSON object or array in a model reply."""
    body = strip_reasoning(text or "")
    if not body:
        raise JSONExtractionError("empty reply")
    candidates = [m.group(1).strip() for m in _FENCE.finditer(body)] + [body]
    for candidate in candidates:
        try:
            return _loads(candidate)
        except JSONExtractionError:
            pass
        for inner in _balanced_candidates(candidate):
            try:
                return _loads(inner)
            except JSONExtractionError:
                continue
    raise JSONExtractionError("no JSON object or array found in the reply")
