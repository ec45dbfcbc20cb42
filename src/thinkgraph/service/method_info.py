"""Each method's settings as data (name, type, default, choices, the comment that documents it), read
from the method's own settings model, so that the page builds its options form from it."""

from __future__ import annotations

import inspect
import re
import typing
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel

from thinkgraph.config import Settings
from thinkgraph.methods.catalog import CATALOG, DEFAULT_METHOD
from thinkgraph.service.schemas import MethodInfo, MethodSetting

_FIELD = re.compile(r"^\s+(\w+)\s*:[^#]*(?:#\s*(.+))?$")


def _type_of(annotation: Any) -> tuple[str, list[Any] | None]:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is Literal:
        return "enum", list(typing.get_args(annotation))
    if args and typing.get_origin(annotation) is not Literal:
        return _type_of(args[0])
    return {bool: "boolean", int: "integer", float: "number"}.get(annotation, "string"), None


@cache
def _comments(model: type[BaseModel]) -> dict[str, str]:
    """Each field's comment in the model's source (trailing, or the comment lines just above it):
    it says what the setting does and where its default comes from."""
    try:
        lines = inspect.getsource(model).splitlines()
    except (OSError, TypeError):
        return {}
    out: dict[str, str] = {}
    above: list[str] = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("#"):
            above.append(stripped.lstrip("# "))
            continue
        if m := _FIELD.match(line):
            out[m.group(1)] = (m.group(2) or " ".join(above)).strip()
        above = []
    return {k: v for k, v in out.items() if v}


def settings_of(model: type[BaseModel], defaults: dict[str, Any] | None = None) -> list[MethodSetting]:
    """``defaults``: values that replace the model's own (a method whose settings default to a
    configured section shows the configured values)."""
    comments: dict[str, str] = {}
    for klass in reversed(model.__mro__):  # a subclass's settings are documented where they are declared
        if isinstance(klass, type) and issubclass(klass, BaseModel) and klass is not BaseModel:
            comments |= _comments(klass)
    out = []
    for name, field in model.model_fields.items():
        kind, choices = _type_of(field.annotation)
        default = (defaults or {}).get(name, field.get_default(call_default_factory=True))
        out.append(MethodSetting(name=name, type=kind, default=default, choices=choices,
                                 description=field.description or comments.get(name)))
    return out


def method_infos(settings: Settings) -> list[MethodInfo]:
    """Every method of the catalog, its settings' defaults as ``settings`` configure them."""
    infos = []
    for record in CATALOG:
        defaults = getattr(settings, record.defaults_from).model_dump() if record.defaults_from else None
        infos.append(MethodInfo(name=record.name, summary=record.summary, default=record.name == DEFAULT_METHOD,
                                needs_llm=record.needs_llm, reads=sorted(record.reads),
                                settings=settings_of(record.config_model(), defaults)))
    return infos
