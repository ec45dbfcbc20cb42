"""The `thinkgraph` command line: index, ask, inspect, export, remove, eval, serve and more.

``app`` (thinkgraph.cli.app) holds the global options and the error wrapper; each command group lives in
its own module and registers on it when imported here. ``main`` is the entry point."""

from __future__ import annotations

import signal
import sys

import typer
from rich.markup import escape
from typer.exceptions import TyperException

from thinkgraph.cli.app import app  # the Typer app (this name hides the submodule of the same name)
from thinkgraph.cli.output import err
from thinkgraph.errors import ExitCode

# Importing a command module registers its commands on `app`, and `thinkgraph --help` lists them in that
# order: building an index first, then asking, copying, evaluating and serving.
from thinkgraph.cli import indexing, ask, copy, evaluate, service  # isort: skip

__all__ = ["app", "ask", "copy", "evaluate", "indexing", "main", "service", "usage_error_line"]


def _terminate_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # `kill PID` ends a command as Ctrl-C does: transactions rolled back, exit 130


def main() -> None:
    """The entry point. Click's usage errors (unknown flags, missing arguments: its exit code 2) exit 1
    here, like ours, since 2 means bad input. SIGTERM takes the Ctrl-C path (`serve` installs uvicorn's
    own handlers when it starts)."""
    signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    try:
        code = app(prog_name="thinkgraph", standalone_mode=False)
    except typer.Abort:
        err.print("interrupted")
        sys.exit(ExitCode.INTERRUPTED)
    except TyperException as exc:  # typer's bundled Click errors (a bad flag or value, a missing argument)
        if getattr(exc, "show", None) is None:
            raise
        if type(exc).__name__ == "NoArgsIsHelpError":  # `thinkgraph` alone: its help, then exit 1
            exc.show()  # type: ignore[attr-defined]
        else:
            err.print(escape(usage_error_line(exc)), highlight=False, soft_wrap=True)
        sys.exit(ExitCode.USAGE if getattr(exc, "exit_code", 2) == 2 else exc.exit_code)
    sys.exit(code if isinstance(code, int) else ExitCode.OK)


def usage_error_line(exc: TyperException) -> str:
    """Click's usage error in one line, as every other error: Click's own form is three (the usage,
    a hint, then the message)."""
    message = " ".join(exc.format_message().split()).rstrip(".")
    message = message[:1].lower() + message[1:]
    ctx = getattr(exc, "ctx", None)
    hint = f"; see `{ctx.command_path} --help`" if ctx is not None else ""
    return f"error: {message}{hint}"
