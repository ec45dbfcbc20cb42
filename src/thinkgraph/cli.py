"""The `thinkgraph` command line: index, ask, inspect, export, remove."""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer
from rich.markup import escape
from rich.table import Table
from typer.exceptions import TyperException

from thinkgraph.api import DEFAULT_INDEX, ThinkGraph
from thinkgraph.cli_output import err, finish_index, out, print_answer, print_index_report, progress_bars
from thinkgraph.errors import ExitCode, InputError, ThinkgraphError, UsageError
from thinkgraph.export import FORMATS, export_graph
from thinkgraph.models import DocStatus

# The method registry imports every method (numpy, scipy, pydantic); `thinkgraph --help` must not.
# tests/test_cli.py checks that these names are the registry's.
METHOD_NAMES = ("none", "naive", "ppr", "hybrid", "a2rag", "topg", "tog3", "ircot", "kgr", "kg-textrag", "kg-graphrag")
DEFAULT_METHOD = "ppr"

app = typer.Typer(help="Build a knowledge-graph index from documents and answer questions over it.",
                  no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)
if TYPE_CHECKING:
    pass

F = TypeVar("F", bound=Callable[..., Any])


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
        except (typer.Exit, typer.Abort):
            raise
        except Exception as exc:  # the top of the program: report, never a bare traceback
            if logging.getLogger().isEnabledFor(logging.INFO):
                raise
            err.print(f"[red]internal error:[/red] {type(exc).__name__}: {escape(str(exc))} (a bug; run with "
                      "--verbose for the traceback and please report it)", highlight=False, soft_wrap=True)
            raise typer.Exit(ExitCode.INTERNAL) from None
    return wrapper  # type: ignore[return-value]


@app.callback()
def main_options(
    ctx: typer.Context,
    index: str = typer.Option(DEFAULT_INDEX, "--index", "-i",
                              help="Index: an SQLite file, or postgresql://user@host/db?schema=NAME."),
    config: Path | None = typer.Option(None, "--config", "-c", help="TOML config (default ./thinkgraph.toml)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log warnings and progress details."),
) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO if verbose else logging.ERROR, format="%(levelname)s %(message)s")
    ctx.obj = {"index": index, "config": config}


def _open(ctx: typer.Context, *, create: bool) -> ThinkGraph:
    from thinkgraph.config import load_settings

    settings = load_settings(ctx.obj["config"])
    return ThinkGraph(ctx.obj["index"], settings=settings, create=create)


@app.command()
@one_line_errors
def index(
    ctx: typer.Context,
    paths: list[Path] = typer.Argument(None, help="Files or directories (.txt .md .html .pdf .jsonl)."),
    extractor: str | None = typer.Option(None, "--extractor", "-e", help="llm | propositions | import | nolm | spacy"),
    openie: Path | None = typer.Option(None, "--openie", help="Precomputed OpenIE JSONL to import."),
    triples: list[Path] = typer.Option([], "--triples", help="Triple file(s) (TSV/CSV) to import."),
    include: list[str] = typer.Option([], "--include", help="Glob of files to take from directories."),
    exclude: list[str] = typer.Option([], "--exclude", help="Glob of files to leave out."),
    kg: Path | None = typer.Option(None, "--kg", help="Import a typed knowledge graph: GRBench graph.json or "
                                   "typed triples (TSV/CSV: head, relation, tail[, head type, tail type])."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Index documents (resumable and incremental: finished work is never redone)."""
    from thinkgraph.store.factory import index_exists

    if not paths and not triples and kg is None and not index_exists(ctx.obj["index"]):
        raise UsageError("give at least one PATH, --triples FILE or --kg FILE")
    if kg is not None:
        with _open(ctx, create=True) as tg:
            imported = tg.import_kg(kg)
        if as_json:
            print(json.dumps(dataclasses.asdict(imported), indent=2))
        else:
            out.print(f"imported {imported.nodes} nodes and {imported.edges} edges ({imported.skipped} records "
                      f"skipped) in {imported.seconds:.1f} s into {imported.path}", highlight=False)
        if not paths and not triples:
            return
    with _open(ctx, create=True) as tg:
        if include:
            tg.settings.index.include = include
        if exclude:
            tg.settings.index.exclude = exclude
        with progress_bars(disable=as_json) as progress:
            report = tg.index(paths or [], extractor=extractor, openie=openie, triples=triples,
                              progress=progress)
        failed = [d.id for d in tg.store.list_documents(DocStatus.FAILED)] if report.failed else []
        if as_json:
            print(json.dumps(dataclasses.asdict(report), indent=2))
        else:
            print_index_report(report)
    finish_index(report, failed)


@app.command()
@one_line_errors
def ask(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The question."),
    method: str = typer.Option(DEFAULT_METHOD, "--method", "-m", help=f"One of: {', '.join(METHOD_NAMES)}"),
    top_k: int | None = typer.Option(None, "--top-k", "-k", min=1,
                                     help="Passages to retrieve and show, for every method (see TOP_K_SETTINGS)."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole Answer as JSON."),
    trace: bool = typer.Option(False, "--trace", help="Print every step of the method."),
    option: list[str] = typer.Option([], "--option", "-o",
                                     help="Method setting KEY=VALUE, e.g. -o i_max=3 -o relation_seeds=false"),
    strategy: str | None = typer.Option(None, "--strategy", help="kgr: cot | tot | got."),
    interaction: str | None = typer.Option(None, "--interaction", help="kgr: agent | explore."),
) -> None:
    """Answer a question (or, with no LLM configured, show the retrieved evidence)."""
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
    with _open(ctx, create=False) as tg:
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


def _parse_options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"option {pair!r} is not KEY=VALUE")
        try:
            options[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            options[key.strip()] = raw
    return options


@app.command()
@one_line_errors
def documents(
    ctx: typer.Context,
    status: str | None = typer.Option(None, "--status", help="Only documents with this status "
                                      "(pending, processing, done, failed)."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """List the indexed documents with their status (and why a failed one failed)."""
    valid = [s.value for s in DocStatus]
    if status is not None and status not in valid:
        raise UsageError(f"unknown status {status!r}; valid: {', '.join(valid)}")
    with _open(ctx, create=False) as tg:
        docs = tg.store.list_documents(DocStatus(status) if status else None)
    if as_json:
        print(json.dumps([dataclasses.asdict(d) for d in docs], indent=2, default=str))
        return
    table = Table(title=f"{len(docs)} document(s)")
    for col in ("id", "title", "status", "characters", "error"):
        table.add_column(col)
    for d in docs:
        table.add_row(escape(d.id), escape(d.title or ""), str(d.status), f"{d.n_chars:,}", escape(d.error or ""))
    out.print(table)


@app.command()
@one_line_errors
def inspect(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Counts per node and edge type, documents by status, failures, communities, LLM cost so far."""
    with _open(ctx, create=False) as tg:
        stats = tg.stats()
    if as_json:
        print(json.dumps(stats, indent=2))
        return
    out.print(escape(f"index {stats['index']} ({stats['size_bytes'] / 1e6:.1f} MB), embedding "
                     f"{stats['embedding_model']} ({stats['embedding_dim']}), extractor {stats['extractor']}"))
    for title, key in (("documents", "documents"), ("nodes", "nodes"), ("edges", "edges"),
                       ("communities by level", "communities_by_level"),
                       ("extraction failures", "extraction_failures")):
        table = Table(title=title, show_header=False)
        for name, count in stats[key].items():
            table.add_row(str(name), str(count))
        if not stats[key]:
            table.add_row("(none)", "0")
        out.print(table)
    usage = Table(title="LLM usage so far")
    for col in ("step", "calls", "prompt tokens", "completion tokens", "seconds"):
        usage.add_column(col)
    for step, u in stats["llm_usage"].items():
        usage.add_row(step, str(u["calls"]), str(u["prompt_tokens"]), str(u["completion_tokens"]),
                      f"{u['seconds']:.1f}")
    out.print(usage)
    for endpoint, form in stats["llm_structured_output"].items():
        out.print(f"structured output with {escape(endpoint)}: {form}", highlight=False)
    if stats["missing_stages"]:
        out.print(f"[yellow]missing derived stages:[/yellow] {', '.join(stats['missing_stages'])} "
                  "(run `thinkgraph index` to finish them)")
    elif stats["stages_outdated"]:
        out.print("[yellow]the graph grew since the derived stages were built[/yellow] (approved reviews, ToG-3 "
                  "write-back): the new nodes join synonyms and communities at the next `thinkgraph index`")
    if stats["stage_timings"]:
        timings = Table(title="last indexing run (stages overlap: the embedding worker runs beside them)")
        timings.add_column("stage")
        timings.add_column("seconds", justify="right")
        for name, seconds in stats["stage_timings"].items():
            timings.add_row(name, f"{seconds:.1f}")
        out.print(timings)


@app.command()
@one_line_errors
def export(
    ctx: typer.Context,
    fmt: str = typer.Argument(..., help=f"One of: {', '.join(FORMATS)}"),
    target: Path = typer.Argument(..., help="Output file (graphml, jsonl) or folder (neo4j)."),
) -> None:
    """Export the graph for other tools (GraphML, JSON Lines, Neo4j import CSV)."""
    with _open(ctx, create=False) as tg:
        try:
            written = export_graph(tg.store, fmt, target)
        except OSError as exc:  # a place this user cannot write (a full disk, /proc, no permission)
            raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
    for path in written:
        out.print(f"wrote {escape(str(path))}", highlight=False)


@app.command()
@one_line_errors
def remove(
    ctx: typer.Context,
    doc_ids: list[str] = typer.Argument(..., help="Document ids to remove."),
) -> None:
    """Remove documents and everything only they supported."""
    with _open(ctx, create=False) as tg:
        for doc_id in doc_ids:
            report = tg.remove_document(doc_id)
            out.print(f"removed {escape(doc_id)}: {report.nodes_removed} nodes, {report.edges_removed} edges")


@app.command()
@one_line_errors
def review(
    ctx: typer.Context,
    action: str = typer.Argument("list", help="list | approve | reject"),
    ids: list[int] = typer.Argument(None, help="Proposal ids to approve or reject."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Review triples proposed from verified answers (a2rag with -o hitl=true)."""
    from thinkgraph.methods.a2rag.hitl import review as review_proposal

    with _open(ctx, create=False) as tg:
        if action == "list":
            pending = tg.store.list_proposals("pending")
            if as_json:
                print(json.dumps([dataclasses.asdict(p) for p in pending], indent=2))
            for p in pending if not as_json else []:
                out.print(escape(f"{p.id}: ({p.subject}, {p.predicate}, {p.object})  source {p.doc_id} {p.chunk_id}"),
                          highlight=False)
            if not pending and not as_json:
                out.print("no pending proposals")
            return
        if action not in ("approve", "reject") or not ids:
            raise UsageError("use: review list | review approve ID... | review reject ID...")
        for pid in ids:
            done = review_proposal(tg.store, pid, approve=action == "approve")
            out.print(escape(f"{done.status} {pid}: ({done.subject}, {done.predicate}, {done.object})"),
                      highlight=False)


# commands kept in their own modules register themselves on `app` (imported after what they use)
from thinkgraph import cli_copy, cli_eval, cli_service  # noqa: E402, F401


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
    except TyperException as exc:  # typer's bundled Click errors: show() prints usage and the message
        show = getattr(exc, "show", None)
        if show is None:
            raise
        show()
        sys.exit(ExitCode.USAGE if getattr(exc, "exit_code", 2) == 2 else exc.exit_code)  # type: ignore[attr-defined]
    sys.exit(code if isinstance(code, int) else ExitCode.OK)


if __name__ == "__main__":
    main()
