"""The `thinkgraph` Typer app: its global options, the one-line error wrapper every command wears, and
opening the index the options name. The command modules import this one and register on ``app``;
nothing here imports them (thinkgraph.cli does)."""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import typer
from rich.markup import escape

from thinkgraph.api import DEFAULT_INDEX, ThinkGraph
from thinkgraph.cli.helpstyle import ConventionalGroup
from thinkgraph.cli.output import err
from thinkgraph.errors import ExitCode, ThinkgraphError

app = typer.Typer(help="Build a knowledge-graph index from documents and answer questions over it.",
                  no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False, cls=ConventionalGroup)

F = TypeVar("F", bound=Callable[..., Any])


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's own flush at exit finds no closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def one_line_errors(fn: F) -> F:
    """Errors a user can cause end the command with one line and their exit code (errors.ExitCode); an
    unexpected exception is a bug: one line saying so (the traceback with --verbose) and exit 70."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ThinkgraphError as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            err.print("interrupted; finished work is saved, run the same command again to resume")
            raise typer.Exit(ExitCode.INTERRUPTED) from None
        except BrokenPipeError:  # `thinkgraph ask ... --json | head`: the reader has what it wanted
            _silence_stdout()
            raise typer.Exit(ExitCode.PIPE_CLOSED) from None
        except (typer.Exit, typer.Abort):
            raise
        except EOFError as exc:  # a bug, not end of input: click would turn it into Abort ("interrupted")
            if logging.getLogger().isEnabledFor(logging.INFO):
                raise RuntimeError(f"EOFError: {exc}") from exc
            _internal_error(exc)
        except Exception as exc:  # the top of the program: report, never a bare traceback
            if logging.getLogger().isEnabledFor(logging.INFO):
                raise
            _internal_error(exc)
    return wrapper  # type: ignore[return-value]


def _internal_error(exc: BaseException) -> NoReturn:
    err.print(f"[red]internal error:[/red] {type(exc).__name__}: {escape(str(exc))} (a bug; run with "
              "--verbose for the traceback and please report it)", highlight=False, soft_wrap=True)
    raise typer.Exit(ExitCode.INTERNAL) from None


@app.callback()
def main_options(
    ctx: typer.Context,
    index: str = typer.Option(DEFAULT_INDEX, "--index", "-i", metavar="PATH",
                              help="Index: an SQLite file, or postgresql://user@host/db?schema=NAME."),
    config: Path | None = typer.Option(None, "--config", "-c", help="TOML config (default ./thinkgraph.toml)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log warnings and progress details."),
) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO if verbose else logging.ERROR, format="%(levelname)s %(message)s")
    ctx.obj = {"index": index, "config": config}


def open_index(ctx: typer.Context, *, create: bool) -> ThinkGraph:
    """The index named by --index, with the settings of --config (or ./thinkgraph.toml)."""
    from thinkgraph.config import load_settings  # here: pydantic is not needed for --help

    settings = load_settings(ctx.obj["config"])
    return ThinkGraph(ctx.obj["index"], settings=settings, create=create)
