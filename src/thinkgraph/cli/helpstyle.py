"""`--help` in the conventions of Click and earlier Typer: a boolean flag shows no type, a value shows
its metavar in capitals (``--index PATH``, ``--top-k INTEGER RANGE``, ``-o TEXT``) and the usage line
names arguments as ``QUESTION`` and ``[PATHS]...``. The Typer of this environment writes every type as
``<bool>``, ``<str>``, ``<path>``, flags included, and a required argument as ``{question}``.

The group and command classes here give their parameters (the generated ``--help`` option included)
these two methods; ``app`` (cli/app.py) is built with the group, and the group hands its commands the
same treatment when it is made, so a command registered anywhere needs nothing of its own."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar, get_args

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

_TYPE_NAMES: dict[Any, str] = {str: "TEXT", int: "INTEGER", float: "FLOAT", bool: "BOOLEAN", Path: "PATH",
                               datetime: "DATETIME"}
P = TypeVar("P")


def type_name(param: TyperOption | TyperArgument) -> str:
    """Click's name for a parameter's type: TEXT, INTEGER, PATH, INTEGER RANGE, [a|b] for choices; a
    list's is its item's (the option is given once per item)."""
    descriptor = param.type_descriptor
    if descriptor.is_choice and descriptor.choices:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in descriptor.choices) + "]"
    annotation = descriptor.annotation
    if descriptor.is_list and get_args(annotation):
        annotation = get_args(annotation)[0]
    if descriptor.is_path:
        return {"file": "FILE", "dir": "DIRECTORY"}.get(descriptor.path_type, "PATH")
    name = _TYPE_NAMES.get(annotation) or getattr(annotation, "__name__", "TEXT").upper()
    return f"{name} RANGE" if descriptor.is_ranged else name


class ConventionalOption(TyperOption):
    def display_type(self, ctx: typer.Context) -> str:  # type: ignore[override]
        return "" if self.is_flag or self.count else type_name(self)


class ConventionalArgument(TyperArgument):
    def display_type(self, ctx: typer.Context) -> str:  # type: ignore[override]
        return type_name(self)

    def _usage_display_name(self) -> str:
        name = self.metavar or (self.name or "").upper()
        name = name if self.required else f"[{name}]"
        return f"{name}..." if self.nargs != 1 else name


_CONVENTIONAL: dict[type, type] = {TyperOption: ConventionalOption, TyperArgument: ConventionalArgument}


def conventional(param: P) -> P:
    """The same parameter object, now displayed in Click's conventions (its class swapped for the
    subclass above, which only adds display methods)."""
    swapped = _CONVENTIONAL.get(type(param))
    if swapped is not None:
        object.__setattr__(param, "__class__", swapped)
    return param


class ConventionalCommand(TyperCommand):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params = [conventional(p) for p in self.params]

    def get_help_option(self, ctx: typer.Context) -> TyperOption | None:  # type: ignore[override]
        return conventional(super().get_help_option(ctx))


class ConventionalGroup(TyperGroup):
    """The app's group: its own options and every command's in Click's conventions."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params = [conventional(p) for p in self.params]
        for command in self.commands.values():
            if type(command) is TyperCommand:
                command.__class__ = ConventionalCommand
            command.params = [conventional(p) for p in command.params]

    def get_help_option(self, ctx: typer.Context) -> TyperOption | None:  # type: ignore[override]
        return conventional(super().get_help_option(ctx))
