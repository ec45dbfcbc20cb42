"""Lenient extraction of JSON from model replies: think blocks, code fences, prose around the
object, trailing commas and smart quotes. Pure functions; a failure says what went wrong."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
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


_STRUCTURE = re.compile(r'[{}\[\]"\\]')
_OPENING = re.compile(r"[{\[]")
MAX_STARTS = 16  # opening brackets tried as the start of a JSON value (bounds the work on junk)
MAX_DEPTH = 64  # deeper nesting is not a reply anyone asked for (and would exhaust the recursion limit)


def _matching_close(text: str, start: int) -> int | None:
    """Index of the bracket closing the one at ``start``, skipping strings; None when unbalanced or
    nested deeper than MAX_DEPTH. Linear: a regex skips the characters that cannot matter."""
    stack: list[str] = []
    in_string = False
    escaped_at = -1  # position of the character a backslash escapes
    for match in _STRUCTURE.finditer(text, start):
        c, pos = match.group(), match.start()
        if pos == escaped_at:
            continue
        if in_string:
            if c == "\\":
                escaped_at = pos + 1
            elif c == '"':
                in_string = False
            continue
        if c == '"':
            in_string = True
        elif c in "{[":
            stack.append("}" if c == "{" else "]")
            if len(stack) > MAX_DEPTH:
                return None
        elif c in "}]":
            if not stack or stack.pop() != c:
                return None
            if not stack:
                return pos
    return None


def _balanced_candidates(text: str) -> Iterator[str]:
    """Substrings that start at an opening brace/bracket and end at its balanced closing one, in order
    of their start; at most MAX_STARTS starts are tried."""
    pos = 0
    for _ in range(MAX_STARTS):
        opening = _OPENING.search(text, pos)
        if opening is None:
            return
        end = _matching_close(text, opening.start())
        if end is not None:
            yield text[opening.start():end + 1]
        pos = opening.start() + 1


def _loads(candidate: str) -> Any:
    for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate.translate(_SMART))):
        try:
            value = json.loads(attempt)
        except (json.JSONDecodeError, RecursionError):  # deep nesting exhausts the parser's recursion
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
