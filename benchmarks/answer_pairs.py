"""What answer_quality.py's report says beside each method's row, paired with `ppr` on the same
questions: the F1 of both on the questions where both final evidences hold a gold passage (where the
method's answer step, not its retrieval, decides), wins and losses, abstentions whose evidence held a
gold passage, and for ircot how often its chain stopped at its first step."""

from __future__ import annotations

import statistics
from typing import Any

BASELINE = "ppr"


def holds_gold(record: dict[str, Any], gold: list[str]) -> bool:
    return bool(set(record.get("retrieved") or []) & set(gold))


def f1(record: dict[str, Any]) -> float:
    return float(record.get("metrics", {}).get("f1", 0.0))


def paired_row(label: str, records: list[dict[str, Any]], baseline: dict[str, dict[str, Any]],
               gold: dict[str, list[str]]) -> dict[str, Any]:
    """The method's records against the baseline's on the same questions."""
    same = [r for r in records if r["qid"] in baseline]
    both = [r for r in same if holds_gold(r, gold.get(r["qid"], [])) and
            holds_gold(baseline[r["qid"]], gold.get(r["qid"], []))]
    abstained = [r for r in records if str(r.get("status")) == "abstained"]
    steps = [r["stats"]["steps"] for r in records  # ircot's reasoning steps (kgr's steps are another count)
             if r.get("method") == "ircot" and (r.get("stats") or {}).get("steps") is not None]
    return {
        "method": label, "paired": len(same),
        "wins": sum(f1(r) > f1(baseline[r["qid"]]) for r in same),
        "losses": sum(f1(r) < f1(baseline[r["qid"]]) for r in same),
        "both_gold": len(both),
        "f1_both": 100 * statistics.mean(f1(r) for r in both) if both else None,
        "baseline_f1_both": 100 * statistics.mean(f1(baseline[r["qid"]]) for r in both) if both else None,
        "abstained": len(abstained),
        "abstained_with_gold": sum(holds_gold(r, gold.get(r["qid"], [])) for r in abstained),
        "first_step_stops": sum(s == 1 for s in steps) if steps else None, "with_steps": len(steps),
    }


def paired_table(records: list[dict[str, Any]], gold: dict[str, list[str]]) -> list[str]:
    """Markdown lines: one row per method other than the baseline."""
    baseline = {r["qid"]: r for r in records if r["label"] == BASELINE}
    if not baseline:
        return []
    lines = ["", f"Paired with `{BASELINE}` on the same questions (both gold: both final evidences hold a gold "
                 "passage; abstained with gold: abstentions whose evidence held one)", "",
             f"| method | paired | wins / losses vs {BASELINE} | both gold | F1 there | {BASELINE}'s F1 there | "
             "abstained (with gold) | stopped at step 1 |", "|---|---|---|---|---|---|---|---|"]
    for label in dict.fromkeys(r["label"] for r in records):
        if label == BASELINE:
            continue
        row = paired_row(label, [r for r in records if r["label"] == label], baseline, gold)
        both = "–" if row["f1_both"] is None else f"{row['f1_both']:.1f}"
        base = "–" if row["baseline_f1_both"] is None else f"{row['baseline_f1_both']:.1f}"
        stops = "–" if row["first_step_stops"] is None else f"{row['first_step_stops']} of {row['with_steps']}"
        lines.append(f"| {label} | {row['paired']} | {row['wins']} / {row['losses']} | {row['both_gold']} | {both} | "
                     f"{base} | {row['abstained']} ({row['abstained_with_gold']}) | {stops} |")
    return lines


def before_after(records: list[dict[str, Any]], before: list[dict[str, Any]]) -> list[str]:
    """Markdown lines: each label's F1 now and in ``before`` (an earlier run's records) on the questions
    both answered, with the questions it won and lost against its earlier self."""
    earlier = {(r["label"], r["qid"]): r for r in before}
    lines = ["", "Against the earlier records (same label, same questions)", "",
             "| method | n | F1 before | F1 now | better / worse |", "|---|---|---|---|---|"]
    for label in dict.fromkeys(r["label"] for r in records):
        pairs = [(earlier[(label, r["qid"])], r) for r in records
                 if r["label"] == label and (label, r["qid"]) in earlier]
        if not pairs:
            continue
        then = 100 * statistics.mean(f1(a) for a, _ in pairs)
        now = 100 * statistics.mean(f1(b) for _, b in pairs)
        lines.append(f"| {label} | {len(pairs)} | {then:.1f} | {now:.1f} | "
                     f"{sum(f1(b) > f1(a) for a, b in pairs)} / {sum(f1(b) < f1(a) for a, b in pairs)} |")
    return lines
