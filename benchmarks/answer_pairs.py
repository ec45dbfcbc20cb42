"""What answer_quality.py's report says beside each method's row, paired with `ppr` on the same
questions: the F1 of both on the questions where both final evidences hold a gold passage (where the
method's answer step, not its retrieval, decides), wins and losses, abstentions whose evidence held a
gold passage, and for ircot how often its chain stopped at its first step. Given the gold answers and
the corpus texts, it also says on how many of the losses the method's top 5 lacked every gold answer
string while `ppr`'s held one: a gold passage may be a first hop's, and then the loss is the method's
evidence, not its reader. The same split by every hop: the questions where both top 5s hold every gold
passage (the answer step alone decides there), and those where `ppr`'s holds every one and the method's
does not (a hop its retrieval missed)."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from typing import Any

BASELINE = "ppr"


_WORD = re.compile(r"\w+")


def _words(text: str) -> str:
    return " " + " ".join(_WORD.findall(text.casefold())) + " "


@dataclass(frozen=True)
class AnswerTexts:
    """The gold answers (and aliases) by question and the corpus texts by passage id: whether a
    record's top 5 shows an answer, word for word."""

    answers: dict[str, list[str]] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)

    def shown(self, record: dict[str, Any], depth: int = 5) -> bool:
        text = "".join(_words(self.texts.get(i, "")) for i in (record.get("retrieved") or [])[:depth])
        return any(_words(a).strip() and _words(a) in text for a in self.answers.get(record["qid"], []))


def holds_gold(record: dict[str, Any], gold: list[str]) -> bool:
    return bool(set(record.get("retrieved") or []) & set(gold))


def holds_every_hop(record: dict[str, Any], gold: list[str], depth: int = 5) -> bool:
    """Whether the record's top ``depth`` holds every gold passage (the top 5: what the readers read; topg
    records the passages of every fact it collected, and reads the first 5)."""
    return bool(gold) and set(gold) <= set((record.get("retrieved") or [])[:depth])


def _mean_f1(records: list[dict[str, Any]]) -> float | None:
    return 100 * statistics.mean(f1(r) for r in records) if records else None


def f1(record: dict[str, Any]) -> float:
    return float(record.get("metrics", {}).get("f1", 0.0))


def paired_row(label: str, records: list[dict[str, Any]], baseline: dict[str, dict[str, Any]],
               gold: dict[str, list[str]], answers: AnswerTexts | None = None) -> dict[str, Any]:
    """The method's records against the baseline's on the same questions."""
    same = [r for r in records if r["qid"] in baseline]
    lost = [r for r in same if f1(r) < f1(baseline[r["qid"]])]
    both = [r for r in same if holds_gold(r, gold.get(r["qid"], [])) and
            holds_gold(baseline[r["qid"]], gold.get(r["qid"], []))]
    every = [r for r in same if holds_every_hop(r, gold.get(r["qid"], [])) and
             holds_every_hop(baseline[r["qid"]], gold.get(r["qid"], []))]
    missed = [r for r in same if holds_every_hop(baseline[r["qid"]], gold.get(r["qid"], [])) and
              not holds_every_hop(r, gold.get(r["qid"], []))]
    abstained = [r for r in records if str(r.get("status")) == "abstained"]
    steps = [r["stats"]["steps"] for r in records  # ircot's reasoning steps (kgr's steps are another count)
             if r.get("method") == "ircot" and (r.get("stats") or {}).get("steps") is not None]
    return {
        "method": label, "paired": len(same),
        "wins": sum(f1(r) > f1(baseline[r["qid"]]) for r in same),
        "losses": len(lost),
        "lost_unshown": None if answers is None else
        sum(not answers.shown(r) and answers.shown(baseline[r["qid"]]) for r in lost),
        "both_gold": len(both),
        "f1_both": _mean_f1(both), "baseline_f1_both": _mean_f1([baseline[r["qid"]] for r in both]),
        "every_hop": len(every), "f1_every": _mean_f1(every),
        "baseline_f1_every": _mean_f1([baseline[r["qid"]] for r in every]),
        "hop_missed": len(missed), "f1_missed": _mean_f1(missed),
        "baseline_f1_missed": _mean_f1([baseline[r["qid"]] for r in missed]),
        "abstained": len(abstained),
        "abstained_with_gold": sum(holds_gold(r, gold.get(r["qid"], [])) for r in abstained),
        "first_step_stops": sum(s == 1 for s in steps) if steps else None, "with_steps": len(steps),
    }


def paired_table(records: list[dict[str, Any]], gold: dict[str, list[str]],
                 answers: AnswerTexts | None = None) -> list[str]:
    """Markdown lines: one row per method other than the baseline."""
    baseline = {r["qid"]: r for r in records if r["label"] == BASELINE}
    if not baseline:
        return []
    lines = ["", f"Paired with `{BASELINE}` on the same questions (both gold: both final evidences hold a gold "
                 "passage; every hop: both top 5s hold every gold passage, n: F1 (ppr's); a hop missed: ppr's holds "
                 "every one and the method's does not; abstained with gold: abstentions whose evidence held one; "
                 f"answer not shown: losses whose top 5 lacked the gold answer's words where {BASELINE}'s held them)",
             "",
             f"| method | paired | wins / losses vs {BASELINE} | losses, answer not shown | both gold | F1 there | "
             f"{BASELINE}'s F1 there | every hop | a hop missed | abstained (with gold) | stopped at step 1 |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for label in dict.fromkeys(r["label"] for r in records):
        if label == BASELINE:
            continue
        row = paired_row(label, [r for r in records if r["label"] == label], baseline, gold, answers)
        unshown = "–" if row["lost_unshown"] is None else str(row["lost_unshown"])
        both = "–" if row["f1_both"] is None else f"{row['f1_both']:.1f}"
        base = "–" if row["baseline_f1_both"] is None else f"{row['baseline_f1_both']:.1f}"
        stops = "–" if row["first_step_stops"] is None else f"{row['first_step_stops']} of {row['with_steps']}"
        lines.append(f"| {label} | {row['paired']} | {row['wins']} / {row['losses']} | {unshown} | "
                     f"{row['both_gold']} | {both} | {base} | "
                     f"{_split(row['every_hop'], row['f1_every'], row['baseline_f1_every'])} | "
                     f"{_split(row['hop_missed'], row['f1_missed'], row['baseline_f1_missed'])} | "
                     f"{row['abstained']} ({row['abstained_with_gold']}) | {stops} |")
    return lines


def _split(n: int, mine: float | None, base: float | None) -> str:
    """ "n: F1 (ppr's F1)" of a subset of the questions, "0" when empty."""
    return str(n) if mine is None or base is None else f"{n}: {mine:.1f} ({base:.1f})"


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
