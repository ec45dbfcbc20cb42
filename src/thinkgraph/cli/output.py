"""What the command line prints: index reports and their exit codes, answers (progress: cli/progress.py)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape

from thinkgraph.citations import display_quote
from thinkgraph.errors import ExitCode
from thinkgraph.index.extras import INSTALL_HINT, NEEDS_EXTRA
from thinkgraph.models import Answer, NodeType

if TYPE_CHECKING:
    from thinkgraph.config import Settings
    from thinkgraph.index.pipeline import IndexReport


class _PipedConsole(Console):
    """Rich ends the program with exit 1 when the reader of stdout goes away (`ask ... | head -1`);
    the command line's wrapper turns the pipe error into exit 141 like any other (cli/app.py)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


# Output that is not a terminal (a pipe, a file, CI's log) is not wrapped: Rich would break every line
# at 80 columns, its width without a terminal, and a script or a reader of the log would find a quote
# or an error split over lines. A COLUMNS the user sets still decides.
UNWRAPPED_WIDTH = 1000


def _unwrapped_when_piped(console: Console) -> Console:
    if not console.is_terminal and not os.environ.get("COLUMNS"):
        console.soft_wrap = True
        console.width = UNWRAPPED_WIDTH
    return console


out = _unwrapped_when_piped(_PipedConsole())
err = _unwrapped_when_piped(Console(stderr=True))


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 document``, ``4 documents``, ``0 documents``; ``plural`` where an added s is wrong."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


SLOWEST_STAGES = 3


def print_index_report(report: IndexReport) -> None:
    out.print(f"indexed {counted(report.indexed, 'document')} ({counted(report.chunks, 'chunk')}), "
              f"{report.unchanged} unchanged, {report.updated} updated, {report.failed} failed, "
              f"{len(report.skipped)} skipped{skip_kinds(report)}", highlight=False)
    if report.communities_skipped:
        communities = "skipped (setting index.communities; only tog3 reads them)"
    elif "communities" in report.rebuilt_stages:
        communities = f"{report.communities} in {counted(report.community_levels, 'level')}"
        if report.summary_failures:
            communities += f" ({counted(report.summary_failures, 'summary', 'summaries')} failed: model-free text kept)"
    else:  # nothing changed since they were built: the run did not count them
        communities = "up to date"
    synonyms = report.synonyms if "synonyms" in report.rebuilt_stages else "up to date"
    out.print(f"extraction failures: {report.extraction_failures}; synonyms: {synonyms}; "
              f"communities: {communities}")
    if report.llm_calls or report.llm_cached_calls:
        out.print(llm_calls_line(report), highlight=False)
    if report.timings:  # the slowest stages only: the full breakdown is for benchmarks, not the screen
        slowest = sorted(report.timings.items(), key=lambda kv: -kv[1])[:SLOWEST_STAGES]
        out.print("slowest stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in slowest), highlight=False)
    for line in report.skipped[:20]:
        out.print(f"  skipped {escape(line)}", highlight=False)
    if len(report.skipped) > 20:
        out.print(f"  ... and {len(report.skipped) - 20} more skipped")


def skip_kinds(report: IndexReport) -> str:
    """`` (2 needs an extra, 1 unsupported type)``: the skipped inputs counted by why."""
    kinds = sorted(report.skipped_by_kind.items(), key=lambda kv: (-kv[1], kv[0]))
    return f" ({', '.join(f'{n} {kind}' for kind, n in kinds)})" if kinds else ""


def kept_extraction_warning(report: IndexReport) -> str | None:
    """A run whose extractor is not the one the index was built with re-extracts no unchanged document:
    said, with the ways to re-extract them."""
    if report.extractor_kept is None:
        return None
    n = report.unchanged
    return (f"warning: this index was built with extractor {report.extractor_kept}: its "
            f"{counted(n, 'unchanged document')} {'keeps' if n == 1 else 'keep'} that extraction ({report.extractor} "
            f"extracts only new and changed documents); to re-extract {'it' if n == 1 else 'them'}, index into a new "
            f"index (--index NEW.db), or `thinkgraph remove` {'it' if n == 1 else 'them'} and index again")


def llm_calls_line(report: IndexReport) -> str:
    """``LLM calls: 21 (document summary 4, community summary 17); 3 more from the cache``."""
    steps = ", ".join(f"{step.split('.', 1)[-1].replace('_', ' ')} {n}" for step, n in report.llm_calls.items())
    line = f"LLM calls: {sum(report.llm_calls.values())}" + (f" ({steps})" if steps else "")
    return line + (f"; {report.llm_cached_calls} more from the cache" if report.llm_cached_calls else "")


def llm_summaries_notice(settings: Settings) -> str | None:
    """What indexing asks a configured LLM for that no flag of the command named: the summaries."""
    s = settings.index
    jobs = []
    if s.document_summaries != "first_sentences":
        jobs.append("a summary of each new or changed document")
    if s.summarize_communities and s.communities != "never":
        jobs.append("a summary of each new or changed community")
    if not jobs:
        return None
    return (f"the LLM ({settings.llm.model or 'the configured model'}) is asked for {' and '.join(jobs)}: one call "
            "each, cached ([index] document_summaries = \"first_sentences\" and summarize_communities = false "
            "turn them off)")


def finish_index(report: IndexReport, failed: list[str], *, removed: str | None = None) -> None:
    """The exit code says whether everything asked for was indexed: a spent budget stops the run (3,
    run again to resume), failed documents make it partial (4), and input that was all skipped is an
    input error (2). ``removed``: the new index this run made and removed again, holding nothing."""
    if report.stopped:
        err.print(f"[yellow]stopped early:[/yellow] {escape(report.stopped)}; run again to resume")
        raise typer.Exit(ExitCode.UPSTREAM)
    if failed:
        shown = ", ".join(failed[:10]) + (f" and {len(failed) - 10} more" if len(failed) > 10 else "")
        err.print(f"[yellow]{len(failed)} document(s) failed:[/yellow] {escape(shown)} "
                  "(see `thinkgraph documents --status failed`; run again to retry)", highlight=False)
        raise typer.Exit(ExitCode.PARTIAL)
    if report.skipped and not (report.indexed or report.unchanged or report.updated):
        where = f"; no index was left at {removed}" if removed else ""
        extra = f"; {INSTALL_HINT} reads the files that need an extra" if report.skipped_by_kind.get(NEEDS_EXTRA) \
            else ""
        err.print(f"[red]error:[/red] nothing was indexed: every input was skipped{escape(skip_kinds(report))}"
                  f"{escape(extra)}{escape(where)}", highlight=False, soft_wrap=True)
        raise typer.Exit(ExitCode.INPUT)


def fallback_notes(answer: Answer) -> list[str]:
    """What the method did instead of what was asked, said on screen (not only in --json)."""
    notes = []
    if any(step.outputs.get("dense_fallback") for step in answer.trace):
        notes.append(f"{answer.method}: no question entity reached the graph, so the passages come from dense "
                     "(embedding) retrieval instead")
    return notes


def graph_legend(paths: list[str]) -> str:
    """The legend of the mark a walk's path writes for a co-occurrence link (``A ~ B``), when a path
    holds one (a relation reads as an arrow, ``-founded->``, and needs none)."""
    legend = " (A ~ B: named in one sentence, or one is the title of the document whose sentence names the other)"
    return legend if any(" ~ " in p for p in paths) else ""


UNCITED_SHOWN = 5  # passages listed for an answer that cites none (an abstention, a failed reply)


def print_uncited_passages(answer: Answer) -> None:
    """What the method retrieved when no answer cites it: without it an abstention shows only its facts,
    and the reader cannot see whether the passages held the answer the model did not give."""
    chunks = [n for n in answer.evidence.nodes if n.type == NodeType.CHUNK]
    if not chunks:
        return
    more = f", the first {UNCITED_SHOWN} of {len(chunks)}" if len(chunks) > UNCITED_SHOWN else ""
    out.print(f"[bold]Passages retrieved[/bold] (no answer cites them{more})", highlight=False)
    for i, node in enumerate(chunks[:UNCITED_SHOWN], 1):
        doc = node.props.get("doc_id", "?")
        where = f", {node.props['location']}" if node.props.get("location") else ""
        out.print(escape(f"({i}) {doc}{where} ({node.id})\n    {display_quote(node.text, 300)}"), highlight=False)


def print_answer(answer: Answer, trace: bool) -> None:
    if answer.text is not None:
        out.print(f"[bold]Answer[/bold] ({answer.method}, {answer.status}): {escape(answer.text)}", highlight=False)
    elif answer.status in ("failed", "abstained"):  # no text to show: the status still heads what follows
        out.print(f"[bold]No answer[/bold] ({answer.method}, {answer.status})", highlight=False)
    if answer.message:
        out.print(f"[yellow]{escape(answer.message)}[/yellow]", highlight=False)
    for note in fallback_notes(answer):
        out.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False)
    if answer.citations:
        out.print("[bold]Evidence[/bold] (the sentences of each passage that answer the question)")
    ranked = any(c.score for c in answer.citations)  # a method that does not score passages shows no score
    for i, c in enumerate(answer.citations, 1):
        span = f"chars {c.start}-{c.end}" if c.start is not None else "span unknown"
        page = f", {c.location}" if c.location else f", page {c.page}" if c.page else ""
        score = f" score {c.score:.3f}" if ranked and c.score is not None else ""
        quote = display_quote(c.quote, 400)  # plain text: no **bold** or # heading marks
        out.print(escape(f"[{i}] {c.doc_id} {span}{page} ({c.chunk_id}){score}\n    {quote}"), highlight=False)
    if not answer.citations:
        print_uncited_passages(answer)
    if answer.evidence.path_texts:
        out.print(f"[bold]Graph evidence[/bold]{escape(graph_legend(answer.evidence.path_texts))}", highlight=False)
    for path in answer.evidence.path_texts:
        out.print(f"  {escape(path)}", highlight=False)
    for step in answer.trace:
        if trace:
            out.print(f"- {step.agent}/{step.action} {step.seconds:.2f}s calls={step.cost.calls} "
                      f"tokens={step.cost.prompt_tokens}+{step.cost.completion_tokens}", highlight=False)
            out.print(escape(f"    in: {json.dumps(step.inputs, default=str)[:300]}"), highlight=False)
            out.print(escape(f"    out: {json.dumps(step.outputs, default=str)[:300]}"), highlight=False)
    cost = answer.cost
    out.print(f"cost: {counted(cost.calls, 'LLM call')} ({cost.cached_calls} cached), {cost.prompt_tokens}+"
              f"{cost.completion_tokens} tokens, {cost.seconds:.2f}s")
