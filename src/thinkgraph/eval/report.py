"""The Markdown report of an evaluation run: metric and cost tables per method, index statistics
(ToG-3 Table 2 style) and, when judged, pairwise win rates with ELO ratings."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

ANSWER_METRICS = ("em", "em_substring", "f1", "precision", "recall", "rouge_l", "llm_correct", "accuracy",
                  "factual_f1", "similarity")
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


def _stat_text(value: Any) -> str:
    if "mean" in value:
        return f"mean {value['mean']:.2f}, max {value['max']:g}"
    return ", ".join(f"{k}: {v}" for k, v in value.items())


def _sections(rows: Sequence[dict[str, Any]], loss: Sequence[dict[str, Any]] | None,
              plots: Sequence[Path]) -> list[str]:
    parts: list[str] = []
    typed = [(r["method"], t, v) for r in rows for t, v in sorted(r.get("by_type", {}).items())]
    if typed:
        present = [m for m in ANSWER_METRICS if any(m in v for _, _, v in typed)]
        parts += ["## By question type (%)", "", _table(["method", "type", "questions", *present],
                  [[m, t, str(v["questions"]), *(_fmt(v.get(k)) for k in present)] for m, t, v in typed]), ""]
    stats = [(r["method"], key, _stat_text(v)) for r in rows for key, v in r.get("stats", {}).items()]
    if stats:
        parts += ["## Method statistics", "", _table(["method", "figure", "value"], [list(x) for x in stats]), ""]
    if loss:
        keys = [k for k in RETRIEVAL_METRICS if any(k in r for r in loss)]
        parts += ["## Extraction loss (entities deleted; mean over seeds)", "",
                  _table(["method", "deleted (%)", "seeds", *keys],
                         [[r["method"], f"{100 * r['fraction']:.0f}", str(r["seeds"]), *(_fmt(r.get(k)) for k in keys)]
                          for r in loss]), ""]
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
                      [[r["method"], str(r["questions"]), *(_fmt(r.get(m)) for m in present)] for r in rows]), ""]
    judged = any("judge_failures" in r for r in rows)
    header = ["method", "errors", *(["judge failures"] if judged else [])] + [f"{c} mean" for c in COST_COLUMNS] \
        + [f"{c} P95" for c in COST_COLUMNS]
    parts += ["## Cost per question", "", _table(header, [
        [r["method"], str(r["errors"]), *([str(r.get("judge_failures", 0))] if judged else []),
         *(_fmt(float(r[f"{c}_mean"])) for c in COST_COLUMNS),
         *(_fmt(float(r[f"{c}_p95"])) for c in COST_COLUMNS)] for r in rows]), ""]
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
        ref = pairwise["reference"]
        rows_p = []
        for label, data in pairwise["methods"].items():
            for criterion, v in data["criteria"].items():
                rows_p.append([label, criterion, _fmt(None if v["win_rate"] is None else 100 * v["win_rate"]),
                               _fmt(v["elo"]), str(v["inconsistent"]), str(data["pairs"])])
        parts += [f"## Pairwise against {ref} (ELO: {ref} = 1600)", "",
                  _table(["method", "criterion", "win rate (%)", "ELO", "position-biased", "pairs"], rows_p), ""]
    parts += _sections(rows, loss, plots)
    return "\n".join(parts)


def write_report(path: str | Path, text: str) -> Path:
    out = Path(path)
    out.write_text(text, encoding="utf-8")
    return out
