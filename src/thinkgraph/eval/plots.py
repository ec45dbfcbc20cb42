"""PNG plots of an evaluation run: answer quality against tokens per question, Recall@5 under
extraction loss, and an ELO heatmap of pairwise judging. Drawn off-screen (Agg), no display needed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

QUALITY_PREFERENCE = ("accuracy", "llm_correct", "f1", "em_substring", "recall@5")


def quality_metric(rows: Sequence[dict[str, Any]]) -> str | None:
    return next((m for m in QUALITY_PREFERENCE if any(m in r for r in rows)), None)


def quality_vs_tokens(rows: Sequence[dict[str, Any]], path: Path) -> Path | None:
    """Quality against cost, one marker per method named in the legend (labels on the points overlap
    when methods score alike). Cost is LLM tokens per question, or seconds when no LLM was used."""
    metric = quality_metric(rows)
    if metric is None or not rows:
        return None
    tokens = [r.get("prompt_tokens_mean", 0.0) + r.get("completion_tokens_mean", 0.0) for r in rows]
    by_time = not any(tokens)
    xs = [r.get("seconds_mean", 0.0) for r in rows] if by_time else tokens
    fig, ax = plt.subplots(figsize=(7, 4.2))
    markers = "osD^vP*Xh<>"
    for i, (r, x) in enumerate(zip(rows, xs, strict=True)):
        ax.scatter(x, r.get(metric, 0.0), s=60, marker=markers[i % len(markers)], label=r["method"], alpha=0.85)
    ax.set_xlabel("seconds per question (mean; no LLM tokens)" if by_time else "LLM tokens per question (mean)")
    ax.set_ylabel(f"{metric} (%)")
    ax.set_ylim(-2, 102)
    ax.set_title(f"{metric} against cost")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return _save(fig, path)


def loss_curves(loss_rows: Sequence[dict[str, Any]], path: Path, metric: str = "recall@5") -> Path | None:
    if not loss_rows:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    for label in dict.fromkeys(r["method"] for r in loss_rows):
        points = sorted((r["fraction"], r.get(metric, 0.0)) for r in loss_rows if r["method"] == label)
        ax.plot([100 * f for f, _ in points], [v for _, v in points], marker="o", label=label)
    ax.set_xlabel("entities deleted (%)")
    ax.set_ylabel(f"{metric} (%)")
    ax.set_title("Extraction loss")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def elo_heatmap(pairwise: dict[str, Any], path: Path) -> Path | None:
    methods = list(pairwise.get("methods", {}))
    if not methods:
        return None
    criteria = list(next(iter(pairwise["methods"].values()))["criteria"])
    values = [[pairwise["methods"][m]["criteria"][c]["elo"] or float("nan") for c in criteria] for m in methods]
    fig, ax = plt.subplots(figsize=(1.6 * len(criteria) + 2, 0.6 * len(methods) + 1.5))
    image = ax.imshow(values, cmap="RdYlGn", vmin=1200, vmax=2000, aspect="auto")
    ax.set_xticks(range(len(criteria)), criteria, rotation=20, ha="right")
    ax.set_yticks(range(len(methods)), methods)
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            ax.text(j, i, "-" if value != value else f"{value:.0f}", ha="center", va="center", fontsize=8)
    fig.colorbar(image, ax=ax, label=f"ELO ({pairwise['reference']} = 1600)")
    return _save(fig, path)


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
