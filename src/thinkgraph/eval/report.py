"""The Markdown report of an evaluation run: metric and cost tables per method, index statistics
(ToG-3 Table 2 style) and, when judged, pairwise win rates with ELO ratings."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

ANSWER_METRICS = ("em", "em_substring", "f1", "precision", "recall", "rouge_l", "llm_correct", "llm_correct_answered",
                  "accuracy", "accuracy_answered", "factual_f1", "similarity", "abstained")
RETRIEVAL_METRICS = ("recall@2", "recall@5", "recall@10", "citation_recall")
COST_COLUMNS = ("calls", "prompt_tokens", "completion_tokens", "seconds")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def display_name(row: dict[str, Any], *, short: bool = False) -> str:
    """A row's method label, with what actually ran when an LLM-free stand-in of the method did
    (e.g. ``a2rag (no LLM: ...)``), so that nobody mistakes it for the method. ``short`` (for plot
    legends) keeps the variant's first clause."""
    variant = str(row.get("variant") or "")
    if not variant:
        return str(row["method"])
    return f"{row['method']} ({variant.split(':')[0] if short else variant})"


def _stat_text(value: Any) -> str:
    if "mean" in value:
        return f"mean {value['mean']:.2f}, max {value['max']:g}"
    return ", ".join(f"{k}: {v}" for k, v in value.items())


def _sections(rows: Sequence[dict[str, Any]], loss: Sequence[dict[str, Any]] | None,
              plots: Sequence[Path]) -> list[str]:
    parts: list[str] = []
    typed = [(display_name(r), t, v) for r in rows for t, v in sorted(r.get("by_type", {}).items())]
    if typed:
        present = [m for m in ANSWER_METRICS if any(m in v for _, _, v in typed)]
        parts += ["## By question type (%)", "", _table(["method", "type", "questions", *present],
                  [[m, t, str(v["questions"]), *(_fmt(v.get(k)) for k in present)] for m, t, v in typed]), ""]
    stats = [(display_name(r), key, _stat_text(v)) for r in rows for key, v in r.get("stats", {}).items()]
    if stats:
        parts += ["## Method statistics", "", _table(["method", "figure", "value"], [list(x) for x in stats]), ""]
    if loss:
        keys = [k for k in RETRIEVAL_METRICS if any(k in r for r in loss)]
        parts += ["## Extraction loss (entities deleted; mean over seeds)", "",
                  _table(["method", "deleted (%)", "seeds", *keys],
                         [[display_name(r), f"{100 * r['fraction']:.0f}", str(r["seeds"]),
                           *(_fmt(r.get(k)) for k in keys)] for r in loss]), ""]
    if plots:
        parts += ["## Plots", "", *(f"![{p.stem}]({p.name})" for p in plots), ""]
    return parts


def render_report(rows: Sequence[dict[str, Any]], *, title: str, index_stats: dict[str, Any] | None = None,
                  pairwise: dict[str, Any] | None = None, loss: Sequence[dict[str, Any]] | None = None,
                  plots: Sequence[Path] = ()) -> str:
    parts = [f"# {title}", ""]
    for heading, metrics in (("Answer quality (%)", ANSWER_METRICS), ("Retrieval (%)", RETRIEVAL_METRICS)):
        present = [m for m in metrics if any(m in r for r in rows)]
        if present:
            parts += [f"## {heading}", "", _table(["method", "questions", *present],
                      [[display_name(r), str(r["questions"]), *(_fmt(r.get(m)) for m in present)] for r in rows]), ""]
    judged = any("judge_failures" in r for r in rows)
    stats = ("mean", "p50", "p95")
    header = ["method", "errors", *(["judge failures"] if judged else [])] + \
        [f"{c} {'median' if s == 'p50' else s.upper() if s == 'p95' else s}" for c in COST_COLUMNS for s in stats]
    parts += ["## Cost per question", "", _table(header, [
        [display_name(r), str(r["errors"]), *([str(r.get("judge_failures", 0))] if judged else []),
         *(_fmt(float(r.get(f"{c}_{s}", 0.0))) for c in COST_COLUMNS for s in stats)] for r in rows]), ""]
    if any("llm_correct_answered" in r or "accuracy_answered" in r for r in rows):
        parts += ["`llm_correct` and `accuracy` count every question (an abstention is not a correct answer); "
                  "the `_answered` columns count only the questions the method answered; `abstained` is the "
                  "share it declined.", ""]
    if index_stats:
        nodes, edges = index_stats.get("nodes", {}), index_stats.get("edges", {})
        usage = index_stats.get("llm_usage", {})
        index_rows = [[k, str(v)] for k, v in {**{f"{k} nodes": v for k, v in nodes.items()},
                                              **{f"{k} edges": v for k, v in edges.items()}}.items()]
        index_rows += [["indexing LLM calls", str(sum(int(u["calls"]) for k, u in usage.items()
                                                      if k.startswith("index.")))],
                       ["index size (MB)", f"{index_stats.get('size_bytes', 0) / 1e6:.1f}"]]
        parts += ["## Index", "", _table(["item", "count"], index_rows), ""]
    if pairwise:
        parts += _pairwise_section(pairwise)
    parts += _sections(rows, loss, plots)
    return "\n".join(parts)


def _interval(values: Sequence[float] | None, scale: float = 1.0) -> str:
    return "-" if not values else f"{scale * values[0]:.1f}-{scale * values[1]:.1f}"


def _pairwise_section(pairwise: dict[str, Any]) -> list[str]:
    ref = pairwise["reference"]
    rows = []
    for label, data in pairwise["methods"].items():
        for criterion, v in data["criteria"].items():
            counts = v.get("counts", {})
            rows.append([label, criterion, _fmt(None if v["win_rate"] is None else 100 * v["win_rate"]),
                         _interval(v.get("win_rate_ci95"), 100.0), _fmt(v["elo"]), _interval(v.get("elo_ci95")),
                         str(counts.get("a", 0)), str(counts.get("b", 0)), str(v["inconsistent"]),
                         str(v["failed"]), str(counts.get("a_only_answered", 0)),
                         str(counts.get("b_only_answered", 0)), str(counts.get("neither_answered", 0)),
                         str(data["pairs"])])
    header = ["method", "criterion", "win rate (%)", "95% CI", "ELO", "ELO 95% CI", "wins", "losses",
              "ties: position-biased", "ties: unreadable", "only it answered", f"only {ref} answered",
              "neither answered", "questions"]
    return [f"## Pairwise against {ref} (ELO: {ref} = 1600)", "",
            "Every question counts: an answer against an abstention or failure wins, two empty sides tie, and "
            "so do verdicts that follow the answers' positions or could not be read (ties count one half). "
            "Intervals: bootstrap over the questions.", "", _table(header, rows), ""]


def write_report(path: str | Path, text: str) -> Path:
    out = Path(path)
    out.write_text(text, encoding="utf-8")
    return out
