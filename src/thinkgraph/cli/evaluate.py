"""`thinkgraph eval and questions` commands (registered on the app of thinkgraph.cli.app)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from thinkgraph.api import ThinkGraph
from thinkgraph.asyncutil import run_sync
from thinkgraph.cli.app import app, one_line_errors, open_index
from thinkgraph.cli.output import counted, out
from thinkgraph.errors import ConfigError, InputError, UsageError
from thinkgraph.methods import catalog


@app.command("eval")
@one_line_errors
def evaluate(
    ctx: typer.Context,
    questions: Path = typer.Argument(..., help="Questions JSONL (id, question, answer, supporting_ids, ...)."),
    method: list[str] = typer.Option([catalog.DEFAULT_METHOD], "--method", "-m",
                                     help="NAME or NAME:key=value,... (repeat to compare methods); NAME one of: "
                                     f"{', '.join(catalog.METHOD_NAMES)}"),
    out: Path = typer.Option(Path("eval-out"), "--out", help="Folder for records, summary, report and plots."),
    retrieval_only: bool = typer.Option(False, "--retrieval-only", help="Recall@k of the retrievers; no LLM."),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N questions."),
    sample: int | None = typer.Option(None, "--sample", help="N questions drawn at random (with --seed)."),
    seed: int = typer.Option(0, "--seed", help="Seed for --sample and for the LLM's sampling."),
    concurrency: int = typer.Option(4, "--concurrency"),
    judge: bool = typer.Option(False, "--judge", help="Add an LLM correctness judge (llm_correct)."),
    accuracy: bool = typer.Option(False, "--accuracy", help="Add GraphRAG-Bench answer accuracy (LLM fact "
                                  "check + semantic similarity)."),
    pairwise_reference: str | None = typer.Option(None, "--pairwise", help="Judge every method against this one "
                                                  "(both orders; win rates and ELO in pairwise.json)."),
    extraction_loss: str | None = typer.Option(None, "--extraction-loss", help="Fractions of entities to delete, "
                                               "e.g. 0,0.1,0.2 (retrieval-only re-runs, A2RAG IV-F)."),
    loss_seeds: int = typer.Option(3, "--loss-seeds", help="Random deletions per extraction-loss fraction."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Evaluate methods on a question set (resumable: recorded questions are not asked again)."""
    from thinkgraph.eval.datasets import load_questions
    from thinkgraph.eval.loss import loss_settings, parse_fractions, run_extraction_loss
    from thinkgraph.eval.runner import EvalRunner, MethodSpec, pairwise

    specs = [MethodSpec.parse(m) for m in method]  # every argument checked before any work or file
    fractions = parse_fractions(extraction_loss) if extraction_loss else []
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file; give a folder for the records, summary and report")
    for name, value in (("--limit", limit), ("--sample", sample)):
        if value is not None and value < 1:
            raise UsageError(f"{name} must be at least 1, not {value}")
    qs = load_questions(questions, limit)
    if sample is not None and sample < len(qs):
        qs = random.Random(seed).sample(qs, sample)
    from thinkgraph.config import load_settings  # here: pydantic is not needed for --help
    from thinkgraph.store.factory import shown_location

    settings = load_settings(ctx.obj["config"])
    settings.llm.seed = seed
    out.mkdir(parents=True, exist_ok=True)
    (out / "run.json").write_text(json.dumps({"questions": str(questions), "count": len(qs), "methods": method,
                                              "retrieval_only": retrieval_only, "seed": seed, "limit": limit,
                                              "sample": sample, "index": shown_location(ctx.obj["index"]),
                                              "model": settings.llm.model}, indent=2), encoding="utf-8")
    if retrieval_only:
        settings.llm.base_url = None
    with ThinkGraph(ctx.obj["index"], settings=settings, create=False) as tg:
        _check_method_options(tg, specs)
        runner = EvalRunner(tg, specs, out, retrieval_only=retrieval_only, concurrency=concurrency, judge=judge,
                            accuracy=accuracy)
        rows = run_sync(runner.run(qs))
        judged = run_sync(pairwise(tg, out, qs, pairwise_reference, [s.label for s in specs])) \
            if pairwise_reference else None
        loss = run_sync(run_extraction_loss(tg, specs, out, qs, loss_settings(fractions, loss_seeds),
                                            concurrency=concurrency)) if fractions else None
        title = f"Evaluation of {questions.name}: {counted(len(qs), 'question')}{_SCOPE[retrieval_only]}"
        _write_eval_outputs(out, rows, title, tg.stats(), judged, loss)
    if as_json:
        print(json.dumps({"methods": rows, "extraction_loss": loss} if loss else rows, indent=2))
        return
    _print_summary(rows, title)
    if loss:
        _print_summary(loss, "extraction loss (mean over seeds)")
    Console(width=200).print(f"records: {out / 'records.jsonl'}  summary: {out / 'summary.json'}  "
                             f"report: {out / 'report.md'}", highlight=False)


_SCOPE = {True: " (retrieval only)", False: ""}  # the title's note of a retrieval-only run


def _check_method_options(tg: ThinkGraph, specs: list[Any]) -> None:
    """A method option that the method refuses is one line before any question is asked (otherwise
    every question would be recorded as an error)."""
    for spec in specs:
        if spec.options:
            catalog.get(spec.method).make_config(tg.settings, spec.options)


def _write_eval_outputs(out: Path, rows: list[dict[str, Any]], title: str, index_stats: dict[str, Any],
                        judged: dict[str, Any] | None, loss: list[dict[str, Any]] | None) -> None:
    from thinkgraph.eval import plots
    from thinkgraph.eval.report import render_report, write_report

    drawn = [plots.quality_vs_tokens(rows, out / "quality_vs_tokens.png")]
    if loss:
        (out / "loss.json").write_text(json.dumps(loss, indent=2), encoding="utf-8")
        drawn.append(plots.loss_curves(loss, out / "extraction_loss.png"))
    if judged:
        drawn.append(plots.elo_heatmap(judged, out / "elo.png"))
    write_report(out / "report.md", render_report(rows, title=title, index_stats=index_stats, pairwise=judged,
                                                  loss=loss, plots=[p for p in drawn if p is not None]))


def _print_summary(rows: list[dict[str, Any]], title: str) -> None:
    """The table of each method's figures, a method by its spec (``a2rag:gate=false``); what ran when that
    is a variant of the method (a paragraph for a2rag without an LLM) is in summary.json and report.md."""
    columns = [k for k in rows[0] if k != "method" and isinstance(rows[0][k], int | float)
               and (not k.endswith(("_p50", "_p95")) or k in ("seconds_p50", "seconds_p95"))] if rows else []
    table = Table(title=title)
    table.add_column("method")
    for col in columns:
        table.add_column(col)
    for row in rows:
        label = f"{row['method']}{' *' if row.get('variant') else ''}"
        table.add_row(escape(label), *[f"{row.get(c, 0):.1f}" if isinstance(row.get(c), float)
                                       else str(row.get(c)) for c in columns])
    Console(width=200).print(table)
    if any(row.get("variant") for row in rows):
        Console(width=200).print("* a variant of the method ran: summary.json and report.md say which", highlight=False)


@app.command()
@one_line_errors
def questions(
    ctx: typer.Context,
    output: Path = typer.Argument(..., help="Where to write the questions (JSONL)."),
    users: int = typer.Option(5, "--users", help="Imagined users (ToPG App. C: 5)."),
    tasks: int = typer.Option(5, "--tasks", help="Tasks per user (5)."),
    per_task: int = typer.Option(5, "--per-task", help="Questions per user and task (5)."),
) -> None:
    """Generate abstract questions about the indexed corpus (users -> tasks -> questions; needs an LLM)."""
    from thinkgraph.eval.question_gen import generate_questions, write_questions

    with open_index(ctx, create=False) as tg:
        if tg.llm is None:
            raise ConfigError("generating questions needs an LLM: set THINKGRAPH_LLM_BASE_URL")
        made = run_sync(generate_questions(tg.store, tg.llm, n_users=users, n_tasks=tasks, n_questions=per_task))
    write_questions(output, made)
    out.print(f"wrote {counted(len(made), 'question')} to {output}", highlight=False)
