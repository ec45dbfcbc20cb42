"""`thinkgraph index, documents, inspect, export, remove and review`: building an index and looking
into it (registered on the app of thinkgraph.cli.app)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from thinkgraph.cli.app import app, one_line_errors, open_index
from thinkgraph.cli.newindex import kept_only_when_filled
from thinkgraph.cli.output import (
    counted,
    err,
    finish_index,
    kept_extraction_warning,
    llm_summaries_notice,
    out,
    print_index_report,
)
from thinkgraph.cli.progress import progress_bars
from thinkgraph.cli.vanished import vanished_documents, vanished_hint
from thinkgraph.errors import InputError, UsageError
from thinkgraph.export import FORMATS, export_graph
from thinkgraph.models import DocStatus


@app.command()
@one_line_errors
def index(
    ctx: typer.Context,
    paths: list[Path] = typer.Argument(None, help="Files or directories (.txt .md .html .pdf .jsonl; .docx .pptx "
                                       ".xlsx .ods .csv .epub .odt: docs/command-line.md)."),
    extractor: str | None = typer.Option(None, "--extractor", "-e", help="nolm (the default: model-free, or "
                                         "[index] extractor in the config) | spacy | llm | propositions | import"),
    openie: Path | None = typer.Option(None, "--openie", help="Precomputed OpenIE JSONL to import."),
    triples: list[Path] = typer.Option([], "--triples", help="Triple file(s) (TSV/CSV) to import."),
    include: list[str] = typer.Option([], "--include", help="Glob of files to take from directories."),
    exclude: list[str] = typer.Option([], "--exclude", help="Glob of files to leave out."),
    kg: Path | None = typer.Option(None, "--kg", help="Import a typed knowledge graph: GRBench graph.json or "
                                   "typed triples (TSV/CSV: head, relation, tail[, head type, tail type])."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    rebuild_derived: bool = typer.Option(False, "--rebuild-derived", help="Rebuild synonyms and communities "
                                         "from the whole graph (by default they follow what changed)."),
) -> None:
    """Index documents (resumable and incremental: finished work is never redone)."""
    from thinkgraph.store.factory import index_exists

    existed = index_exists(ctx.obj["index"])
    if not paths and not triples and kg is None and not existed:
        raise UsageError("give at least one PATH, --triples FILE or --kg FILE")
    if kg is not None:
        _import_kg(ctx, kg, as_json)
        if not paths and not triples:
            return
    with (kept_only_when_filled(ctx.obj["index"], new=not existed and kg is None) as made,
          open_index(ctx, create=True) as tg):
        if include:
            tg.settings.index.include = include
        if exclude:
            tg.settings.index.exclude = exclude
        notice = llm_summaries_notice(tg.settings) if tg.llm is not None and not as_json else None
        if notice:
            err.print(escape(notice), highlight=False, soft_wrap=True)
        with progress_bars(disable=as_json) as progress:
            report = tg.index(paths or [], extractor=extractor, openie=openie, triples=triples,
                              progress=progress, rebuild_derived=rebuild_derived)
        failed = [d.id for d in tg.store.list_documents(DocStatus.FAILED)] if report.failed else []
        gone = vanished_documents(tg.store.list_documents(), paths or []) \
            if any(p.is_dir() for p in paths or []) else []
        if as_json:
            print(json.dumps(dataclasses.asdict(report), indent=2))
        else:
            print_index_report(report)
    if warning := kept_extraction_warning(report):
        err.print(escape(warning), highlight=False, soft_wrap=True)
    if gone:  # said, never done: a file may be gone for a moment (a checkout, a sync)
        err.print(escape(vanished_hint(gone, ctx.obj["index"], ctx.obj["config"])), highlight=False, soft_wrap=True)
    finish_index(report, failed, removed=made.removed)


def _import_kg(ctx: typer.Context, kg: Path, as_json: bool) -> None:
    with open_index(ctx, create=True) as tg:
        imported = tg.import_kg(kg)
    if as_json:
        print(json.dumps(dataclasses.asdict(imported), indent=2))
    else:
        out.print(f"imported {counted(imported.nodes, 'node')} and {counted(imported.edges, 'edge')} "
                  f"({counted(imported.skipped, 'record')} skipped) in {imported.seconds:.1f} s into {imported.path}",
                  highlight=False)


@app.command()
@one_line_errors
def documents(
    ctx: typer.Context,
    status: str | None = typer.Option(None, "--status", help="Only documents with this status "
                                      "(pending, processing, done, failed)."),
    skipped: bool = typer.Option(False, "--skipped", help="List the files `index` skipped, with the reason."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """List the indexed documents with their status (and why a failed one failed), or the skipped files."""
    valid = [s.value for s in DocStatus]
    if status is not None and status not in valid:
        raise UsageError(f"unknown status {status!r}; valid: {', '.join(valid)}")
    if skipped:
        if status is not None:
            raise UsageError("give --skipped or --status, not both")
        _skipped_files(ctx, as_json)
        return
    with open_index(ctx, create=False) as tg:
        docs = tg.store.list_documents(DocStatus(status) if status else None)
    if as_json:
        print(json.dumps([dataclasses.asdict(d) for d in docs], indent=2, default=str))
        return
    table = Table(title=counted(len(docs), "document"))
    for col in ("id", "title", "status", "characters", "error"):
        table.add_column(col)
    for d in docs:
        table.add_row(escape(d.id), escape(d.title or ""), str(d.status), f"{d.n_chars:,}", escape(d.error or ""))
    out.print(table)


def _skipped_files(ctx: typer.Context, as_json: bool) -> None:
    with open_index(ctx, create=False) as tg:
        files = tg.skipped_files()
    if as_json:
        print(json.dumps([dataclasses.asdict(f) for f in files], indent=2, ensure_ascii=False))
        return
    table = Table(title=f"{counted(len(files), 'skipped file')} (the latest `thinkgraph index` of each folder)")
    for col in ("source", "kind", "reason"):
        table.add_column(col)
    for f in files:
        table.add_row(escape(f.source), escape(f.kind), escape(f.reason))
    out.print(table)


@app.command()
@one_line_errors
def inspect(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Counts per node and edge type, documents by status, failures, communities, LLM cost so far."""
    with open_index(ctx, create=False) as tg:
        stats = tg.stats()
    if as_json:
        print(json.dumps(stats, indent=2))
        return
    out.print(escape(f"index {stats['index']} ({stats['size_bytes'] / 1e6:.1f} MB), {_model_line(stats)}"))
    for title, key in (("documents", "documents"), ("nodes", "nodes"), ("edges", "edges"),
                       ("communities by level", "communities_by_level"),
                       ("extraction failures", "extraction_failures")):
        table = Table(title=title, show_header=False)
        for name, count in stats[key].items():
            table.add_row(str(name), str(count))
        if not stats[key]:
            table.add_row("(none)", "0")
        out.print(table)
    if stats["failure_examples"]:
        failures = Table(title="why (the first failures; each is retried by the next `thinkgraph index`)")
        for col in ("stage", "item", "reason"):
            failures.add_column(col)
        for f in stats["failure_examples"]:
            failures.add_row(escape(f["stage"]), escape(f["key"]), escape(f["message"]))
        out.print(failures)
    usage = Table(title="LLM usage so far")
    for col in ("step", "calls", "prompt tokens", "completion tokens", "seconds"):
        usage.add_column(col)
    for step, u in stats["llm_usage"].items():
        usage.add_row(step, str(u["calls"]), str(u["prompt_tokens"]), str(u["completion_tokens"]),
                      f"{u['seconds']:.1f}")
    if not stats["llm_usage"]:  # (an index built without an LLM; an empty table said nothing)
        usage.add_row("(no LLM call yet)", "0", "0", "0", "0.0")
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


def _model_line(stats: dict[str, object]) -> str:
    """The embedding model and extractor, or what a run that stopped before its first document left."""
    model = (f"embedding {stats['embedding_model']} ({stats['embedding_dim']})" if stats["embedding_model"]
             else "embedding not recorded yet (no passage was embedded: run `thinkgraph index` to finish)")
    return f"{model}, extractor {stats['extractor'] or 'not recorded yet'}"


@app.command()
@one_line_errors
def export(
    ctx: typer.Context,
    fmt: str = typer.Argument(..., help=f"One of: {', '.join(FORMATS)}"),
    target: Path = typer.Argument(..., help="Output file (graphml, jsonl) or folder (neo4j)."),
) -> None:
    """Export the graph for other tools (GraphML, JSON Lines, Neo4j import CSV)."""
    with open_index(ctx, create=False) as tg:
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
    with open_index(ctx, create=False) as tg:
        for report in tg.remove_documents(doc_ids):  # the derived stages follow once, after all of them
            out.print(f"removed {escape(report.doc_id)}: {counted(report.nodes_removed, 'node')}, "
                      f"{counted(report.edges_removed, 'edge')}")


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

    with open_index(ctx, create=False) as tg:
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
