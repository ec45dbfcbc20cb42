"""Structured-output dialects of OpenAI-compatible servers, and how a refusal of one is recognised.

Servers differ in how they accept a JSON schema:

- ``json_schema``: ``response_format: {"type": "json_schema", "json_schema": {...}}`` — OpenAI, vLLM
  (guided decoding), LM Studio, llama.cpp's C++ ``llama-server``, Ollama >= 0.5.
- ``json_object_schema``: ``response_format: {"type": "json_object", "schema": {...}}`` — llama-cpp-python's
  server (it compiles the schema to a grammar), also llama-server.
- ``ollama_format``: a top-level ``format`` holding the schema — Ollama's own request field.
- ``json_object``: plain JSON mode without a schema.
- ``none``: no constraint; the prompt asks for JSON and the reply is parsed leniently.

The client tries them in ``NEGOTIATION_ORDER`` and steps down when the server refuses one; the form that
works is remembered per endpoint and model (in the index, so that a resumed run does not probe again).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, Protocol

StructuredForm = Literal["json_schema", "json_object_schema", "ollama_format", "json_object", "none"]
NEGOTIATION_ORDER: tuple[StructuredForm, ...] = (
    "json_schema", "json_object_schema", "ollama_format", "json_object", "none")

# An error body that names the structured-output feature means "not this form", not "server down".
_REFUSAL_WORDS = re.compile(r"response_format|json_schema|json_object|\bschema\b|\bgrammar\b|\bformat\b",
                            re.IGNORECASE)
# Status codes servers answer an unsupported request field with: 400/422 (validation), 500 (llama-cpp-python
# wraps its validation error in a 500), 501 (not implemented).
REFUSAL_STATUS = frozenset({400, 422, 500, 501})


def structured_fields(form: StructuredForm, name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The request body fields that ask for ``schema`` in ``form``."""
    if form == "json_schema":
        return {"response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}}
    if form == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if form == "ollama_format":
        return {"format": schema}
    if form == "json_object":
        return {"response_format": {"type": "json_object"}}
    return {}


def is_refusal(status: int, body: str) -> bool:
    """Whether an HTTP error answers the structured-output fields rather than the request as a whole."""
    return status in REFUSAL_STATUS and bool(_REFUSAL_WORDS.search(body[:4000]))


def next_form(form: StructuredForm) -> StructuredForm | None:
    position = NEGOTIATION_ORDER.index(form)
    return NEGOTIATION_ORDER[position + 1] if position + 1 < len(NEGOTIATION_ORDER) else None


class DialectMemory(Protocol):
    """Where the negotiated form is kept between runs (the index's metadata)."""

    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...


# One metadata entry holds every endpoint's form: {"<base_url>|<model>": "<form>"}.
DIALECT_META_KEY = "llm.structured_output"


def _endpoint(base_url: str, model: str) -> str:
    return f"{base_url.rstrip('/')}|{model}"


def remembered_forms(memory: DialectMemory | None) -> dict[str, str]:
    """Every remembered endpoint ("<base_url>|<model>") and its form; {} when none or unreadable."""
    raw = memory.get_meta(DIALECT_META_KEY) if memory is not None else None
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if v in NEGOTIATION_ORDER}


def recall_form(memory: DialectMemory | None, base_url: str, model: str) -> StructuredForm | None:
    return remembered_forms(memory).get(_endpoint(base_url, model))  # type: ignore[return-value]


def remember_form(memory: DialectMemory | None, base_url: str, model: str, form: StructuredForm) -> None:
    if memory is None:
        return
    forms = remembered_forms(memory)
    forms[_endpoint(base_url, model)] = form
    memory.set_meta(DIALECT_META_KEY, json.dumps(forms, sort_keys=True))
