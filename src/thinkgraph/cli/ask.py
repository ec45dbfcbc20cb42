"""`thinkgraph ask`: answer one question with any method (registered on the app of thinkgraph.cli.app)."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import typer

from thinkgraph.cli.app import app, one_line_errors, open_index
from thinkgraph.cli.output import print_answer
from thinkgraph.errors import ExitCode, UsageError
from thinkgraph.methods.catalog import DEFAULT_METHOD, METHOD_NAMES


@app.command()
@one_line_errors
def ask(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The question; - reads it from standard input."),
    method: str = typer.Option(DEFAULT_METHOD, "--method", "-m", help=f"One of: {', '.join(METHOD_NAMES)}"),
    top_k: int | None = typer.Option(None, "--top-k", "-k", min=1,
                                     help="Passages to retrieve and show, for every method (each method maps "
                                          "it to its own setting: docs/methods.md)."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole Answer as JSON."),
    trace: bool = typer.Option(False, "--trace", help="Print every step of the method."),
    option: list[str] = typer.Option([], "--option", "-o",
                                     help="Method setting KEY=VALUE, e.g. -o i_max=3 -o relation_seeds=false"),
    strategy: str | None = typer.Option(None, "--strategy", help="kgr: cot | tot | got."),
    interaction: str | None = typer.Option(None, "--interaction", help="kgr: agent | explore."),
) -> None:
    """Answer a question (or, with no LLM configured, show the retrieved evidence)."""
    if question == "-":  # a long question, or one from a pipe: the argument list has a size limit
        question = sys.stdin.read().strip()  # (the newline that ends what was piped is no part of it)
    options = _parse_options(option)
    if "top_k" in options:  # -o top_k=N is --top-k N
        if top_k is not None:
            raise UsageError("give --top-k or -o top_k, not both")
        top_k = _positive_int("top_k", options.pop("top_k"))
    for key, value in (("strategy", strategy), ("interaction", interaction)):
        if value is not None:
            if method != "kgr":
                raise UsageError(f"--{key} applies to method kgr only")
            options[key] = value
    with open_index(ctx, create=False) as tg:
        answer = tg.ask(question, method=method, top_k=top_k, **options)
    if as_json:
        print(json.dumps(answer.to_dict(), indent=2, ensure_ascii=False, default=str))
    else:
        print_answer(answer, trace)
    if answer.status == "failed":  # the model's replies could not be used: a script must not take it for an answer
        raise typer.Exit(ExitCode.UPSTREAM)


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{name} must be a whole number of at least 1, not {value!r}")
    return value


# "-o horizon=1,reader=paper": several settings in one -o (as answer_quality.py's method labels write them)
_ANOTHER_SETTING_START = re.compile(r",(?=\s*[A-Za-z_]\w*\s*=)")


def _is_json(raw: str) -> bool:
    try:
        json.loads(raw)
    except json.JSONDecodeError:
        return False
    return True


def _parse_options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"option {pair!r} is not KEY=VALUE")
        if _ANOTHER_SETTING_START.search(raw) and not _is_json(raw):  # ('"a,b=c"' is one JSON string)
            settings = " ".join(f"-o {part.strip()}" for part in _ANOTHER_SETTING_START.split(pair) if part.strip())
            raise UsageError(f"option {pair!r} holds more than one setting: give each its own -o ({settings})")
        if key.strip() in options:  # which one would win is not for the reader to guess
            raise UsageError(f"option {key.strip()!r} is given twice")
        try:
            options[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            options[key.strip()] = raw
    return options
