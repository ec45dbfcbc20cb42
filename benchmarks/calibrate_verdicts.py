"""Calibrate the yes/no verdicts' P(yes) thresholds on the dev questions' answer-quality records.

Each record of `benchmarks/answer_quality.py run` keeps the verdicts its answer went through
(``verdicts``: the step, P(yes) read from the server's log-probabilities, the verdict as written, and the
answer it judged). A verdict "should" say yes when the answer it judged is right: token F1 against the
gold answers of at least --right (the judged draft of a2rag's Triple-Check, the round answer of tog3's
Reflector; where a step judged no answer of its own, topg's Eval, the question's final answer). For
each judgement the curve gives, per threshold, how often P(yes) >= t agrees with that label (accuracy,
true- and false-positive rates), beside the written verdict's accuracy; the chosen point maximises
balanced accuracy (Youden's J), ties to the threshold nearest 0.5. Dev questions only: the thresholds
are the methods' named settings (a2rag check_threshold and sufficiency_threshold, tog3
reflector_threshold, topg eval_threshold).

    .venv/bin/python benchmarks/calibrate_verdicts.py --out bench-out/answer_quality
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

from thinkgraph.eval.datasets import load_questions  # noqa: E402
from thinkgraph.eval.metrics import token_f1  # noqa: E402
from thinkgraph.methods.replies import answer_part, without_markers  # noqa: E402

DATASETS = {"musique": "musique", "hotpotqa": "hotpotqa"}
THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 20)]


def answer_of(judged: str) -> str:
    line, _ = answer_part(judged)
    return without_markers(line).strip()


def best_f1(text: str, golds: list[str]) -> float:
    return token_f1(text, golds).f1


Point = tuple[float, bool, bool]  # P(yes), the label (the judged answer was right), written "yes"


def points(records: list[dict[str, Any]], golds: dict[str, list[str]], right: float) -> dict[str, list[Point]]:
    """(P(yes), label, written yes) per judgement "method step.field"."""
    out: dict[str, list[Point]] = defaultdict(list)
    for r in records:
        for v in r.get("verdicts") or []:
            if not isinstance(v.get("p_yes"), int | float) or r["qid"] not in golds:
                continue
            judged = answer_of(v["judged"]) if v.get("judged") else (r.get("answer") or "")
            label = best_f1(judged, golds[r["qid"]]) >= right
            written = v.get("written") in (True, "yes")
            out[f"{r['method']} {v['step']}.{v['field']}"].append((float(v["p_yes"]), label, written))
    return out


def curve(data: list[Point]) -> tuple[list[str], float]:
    positives = sum(label for _, label, _ in data) or 1
    negatives = sum(not label for _, label, _ in data) or 1
    lines, best, chosen = [], (-2.0, 0.0), 0.5
    for t in THRESHOLDS:
        tp = sum(p >= t and label for p, label, _ in data)
        fp = sum(p >= t and not label for p, label, _ in data)
        acc = sum((p >= t) == label for p, label, _ in data) / len(data)
        j = tp / positives - fp / negatives
        if (j, -abs(t - 0.5)) > best:
            best, chosen = (j, -abs(t - 0.5)), t
        lines.append(f"| {t:.2f} | {100 * acc:.0f} | {100 * tp / positives:.0f} | {100 * fp / negatives:.0f} |")
    return lines, chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "answer_quality")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--right", type=float, default=0.5, help="token F1 at which a judged answer counts as right")
    args = parser.parse_args()
    records, golds = [], {}
    for name, folder in DATASETS.items():
        path = args.out / name / "records.jsonl"
        if not path.exists():
            continue
        records += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        golds |= {q.id: list(q.answers) for q in load_questions(args.data / folder / "questions_dev.jsonl")}
    groups = points(records, golds, args.right)
    if not groups:
        sys.exit(f"error: no verdict with a P(yes) in the records under {args.out} (run answer_quality.py first)")
    for name, data in sorted(groups.items()):
        written = sum(w == label for _, label, w in data) / len(data)
        lines, chosen = curve(data)
        print(f"\n{name}: {len(data)} verdicts, {sum(label for _, label, _ in data)} on right answers; "
              f"written verdict agrees {100 * written:.0f}%; chosen threshold {chosen:.2f}\n")
        print("| threshold | agrees % | yes on right % | yes on wrong % |\n|---|---|---|---|")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
