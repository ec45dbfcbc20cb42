"""Where a run's seconds went, from llama.cpp's server log: each question's calls (matched to the run's
records by the prompt tokens each record says the server read), and per call position the tokens read
and written with the server's seconds for each.

    python benchmarks/results/answer_quality_49/server_profile.py SERVER_LOG RECORDS_JSONL [LABEL]

The run must have asked one question at a time with an empty LLM cache (answer_quality.py's runs here).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from dataclasses import dataclass

PROMPT = re.compile(r"task (\d+) \| prompt eval time =\s+([\d.]+) ms /\s+(\d+) tokens")
WRITE = re.compile(r"task (\d+) \|        eval time =\s+([\d.]+) ms /\s+(\d+) tokens")


@dataclass
class Call:
    read_ms: float
    read: int
    write_ms: float = 0.0
    written: int = 0


def calls_in(log: str) -> list[Call]:
    calls: dict[int, Call] = {}
    order: list[int] = []
    with open(log, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if m := PROMPT.search(line):
                calls[int(m.group(1))] = Call(float(m.group(2)), int(m.group(3)))
                order.append(int(m.group(1)))
            elif (m := WRITE.search(line)) and int(m.group(1)) in calls:
                call = calls[int(m.group(1))]
                call.write_ms, call.written = float(m.group(2)), int(m.group(3))
    return [calls[task] for task in order]


def by_question(calls: list[Call], records: list[dict]) -> list[list[Call]]:
    """Each record's calls: consecutive calls until their tokens read add up to the record's."""
    out, at = [], 0
    for record in records:
        wanted, got, end = record["cost"].get("prompt_tokens_read") or 0, 0, at
        while end < len(calls) and got < wanted:
            got += calls[end].read
            end += 1
        if got != wanted:
            print(f"  not matched: {record['qid']} read {wanted}, log {got}")
        out.append(calls[at:end])
        at = end
    return out


def main(log: str, records_path: str, label: str | None = None) -> None:
    with open(records_path, encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    if label:
        records = [r for r in records if r["label"] == label]
    questions = by_question(calls_in(log), records)
    for position in range(max((len(q) for q in questions), default=0)):
        at = [q[position] for q in questions if len(q) > position]
        print(f"call {position + 1}: {len(at)} questions; read median {statistics.median(c.read for c in at):.0f} "
              f"({sum(c.read_ms for c in at) / 1000:.0f} s in all), wrote median "
              f"{statistics.median(c.written for c in at):.0f} ({sum(c.write_ms for c in at) / 1000:.0f} s in all)")
    reading = sum(c.read_ms for q in questions for c in q) / 1000
    writing = sum(c.write_ms for q in questions for c in q) / 1000
    print(f"reading {reading:.0f} s, writing {writing:.0f} s, "
          f"the questions' own seconds {sum(r['cost']['seconds'] for r in records):.0f}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
