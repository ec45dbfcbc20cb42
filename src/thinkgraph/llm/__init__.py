"""LLM access: an OpenAI-compatible client with cache, retries, budget and usage accounting.

The names below are imported on first use (PEP 562): importing a submodule such as
``thinkgraph.llm.accounting`` then does not load the HTTP client, which an LLM-free ask never needs."""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "UsageMeter": "accounting", "ChatBackend": "backend", "ChatRequest": "backend", "ChatResult": "backend",
    "OpenAICompatibleBackend": "backend", "LLM": "service", "Message": "service",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
