"""Fitting a prompt into the model's context window."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TypedDict

from thinkgraph.tokens import TokenCounter

log = logging.getLogger(__name__)

PER_MESSAGE_OVERHEAD = 4  # role and separators, as chat templates add them
SAFETY_FACTOR = 1.15  # our WordPiece count underestimates most LLM tokenizers a little
TRUNCATION_MARK = "\n[... truncated to fit the context window ...]"



class Message(TypedDict):
    """One chat message (OpenAI chat format)."""

    role: str
    content: str

def prompt_tokens(messages: Sequence[dict[str, str]], counter: TokenCounter) -> int:
    raw = sum(counter.count(m["content"]) + PER_MESSAGE_OVERHEAD for m in messages)
    return int(raw * SAFETY_FACTOR)


def upper_bound_tokens(messages: Sequence[dict[str, str]]) -> int:
    """At least ``prompt_tokens``: a WordPiece token covers at least one character, so no text has
    more tokens than UTF-8 bytes."""
    raw = sum(len(m["content"].encode("utf-8")) + PER_MESSAGE_OVERHEAD for m in messages)
    return int(raw * SAFETY_FACTOR)


def _protected_tail(content: str) -> tuple[str, str]:
    """A message split into the part a cut may shorten and its last paragraph, which it keeps when
    short (a quarter of the message at most): the prompt layout puts the question there
    (methods/layout.py), and a prompt cut to fit must still ask it."""
    head, sep, tail = content.rpartition("\n\n")
    if not sep or not head or len(tail) * 4 > len(content):
        return content, ""
    return head, sep + tail


def fit_messages(
    messages: Sequence[Message], *, context_window: int, max_tokens: int, counter: TokenCounter
) -> tuple[list[dict[str, str]], bool]:
    """Messages that fit ``context_window - max_tokens``: the longest message is cut at its end (before
    its last paragraph, the question, when that is short) until the whole fits. Returns the messages
    and whether anything was cut."""
    fitted: list[dict[str, str]] = [{"role": m["role"], "content": m["content"]} for m in messages]
    allowed = context_window - max_tokens
    if allowed <= 0:
        raise ValueError(f"max_tokens {max_tokens} leaves no room in a context window of {context_window}")
    if upper_bound_tokens(fitted) <= allowed:  # fits whatever the count: no tokenising (per call, on the event loop)
        return fitted, False
    total = prompt_tokens(fitted, counter)
    cut = False
    while total > allowed:
        longest = max(range(len(fitted)), key=lambda i: len(fitted[i]["content"]))
        head, tail = _protected_tail(fitted[longest]["content"])
        head = head.removesuffix(TRUNCATION_MARK)  # cut again: one mark
        own = counter.count(head)
        excess = int((total - allowed) / SAFETY_FACTOR) + 8
        keep = max(0, own - excess)
        if keep == 0 and own == 0:
            break
        fitted[longest]["content"] = counter.truncate(head, keep) + TRUNCATION_MARK + tail
        cut = True
        new_total = prompt_tokens(fitted, counter)
        if new_total >= total:
            break
        total = new_total
    if cut:
        log.warning("prompt cut to fit a context window of %d tokens", context_window)
    return fitted, cut
