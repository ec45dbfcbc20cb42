"""The reliability table: runs the robustness suite (tests/robustness) in its long form and prints what
each scenario measured — runs, lost, duplicated, tracebacks, HTTP 500s, wrong exits, leaked secrets.

The figures come from the tests themselves (each records them as junit properties before it asserts),
so the table and the suite cannot disagree. The long form: twenty kill -9 trials per extractor, 10,000
fuzzed replies per structured call, sixty garbage-fed questions per method, 50 clients for a minute.

    .venv/bin/python benchmarks/robustness.py [--quick] [--out bench-out/robustness] [-k EXPR]

Exits 1 when any scenario lost, duplicated, crashed, leaked or answered wrongly.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEADERS = ("lost", "duplicated", "tracebacks", "HTTP 500", "wrong exits", "leaked", "other")


@dataclass
class Scenario:
    tests: int = 0
    failed_tests: int = 0
    seconds: float = 0.0
    figures: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    peak_mb: float = 0.0


def run_suite(junit: Path, long: bool, select: str | None) -> int:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    if long:
        env["THINKGRAPH_ROBUSTNESS_LONG"] = "1"
    command = [sys.executable, "-m", "pytest", "tests/robustness", "-q", "-p", "no:cacheprovider",
               f"--junitxml={junit}", "-o", "junit_family=xunit1"]
    if select:
        command += ["-k", select]
    return subprocess.run(command, cwd=ROOT, env=env).returncode


def read_figures(junit: Path) -> dict[str, Scenario]:
    scenarios: dict[str, Scenario] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        name = properties.pop("scenario", None) or f"{case.get('classname')}::{case.get('name')} (no figures)"
        scenario = scenarios.setdefault(name, Scenario())
        scenario.tests += 1
        scenario.seconds += float(case.get("time") or 0)
        scenario.failed_tests += int(case.find("failure") is not None or case.find("error") is not None)
        for key, value in properties.items():
            if key == "peak_mb":
                scenario.peak_mb = max(scenario.peak_mb, float(value or 0))
            elif key != "seconds":
                scenario.figures[key] += float(value or 0)
    return scenarios


def table(scenarios: dict[str, Scenario]) -> tuple[str, bool]:
    lines = ["| scenario | runs | " + " | ".join(HEADERS) + " | peak MB | s | tests failed |",
             "|---|---:|" + "---:|" * len(HEADERS) + "---:|---:|---:|"]
    clean = True
    unmeasured = [s for s in scenarios.values() if not s.figures]  # structural checks: only pass or fail
    for name, s in scenarios.items():
        if not s.figures and not s.failed_tests:
            continue
        f = s.figures
        other = sum(f[k] for k in ("foreign_citations", "uncounted_failures", "failed_requests"))
        cells = [f["lost"], f["duplicated"], f["tracebacks"], f["http_500"], f["wrong_exits"], f["leaked"], other]
        clean = clean and not any(cells) and not s.failed_tests
        lines.append(f"| {name} | {int(f['runs'])} | " + " | ".join(str(int(c)) for c in cells)
                     + f" | {s.peak_mb or '-'} | {s.seconds:.0f} | {s.failed_tests}/{s.tests} |")
    if unmeasured:
        failed = sum(s.failed_tests for s in unmeasured)
        lines.append(f"\nand {len(unmeasured)} checks without figures: {len(unmeasured) - failed} passed")
        clean = clean and not failed
    return "\n".join(lines), clean


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the short form CI runs (a few runs per scenario)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "robustness")
    parser.add_argument("-k", dest="select", help="only the tests pytest -k selects")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    junit = args.out / "junit.xml"
    started = time.perf_counter()
    code = run_suite(junit, long=not args.quick, select=args.select)
    if not junit.exists():
        print(f"pytest wrote no report (exit {code})", file=sys.stderr)
        return 2
    text, clean = table(read_figures(junit))
    text += (f"\n\n{'long' if not args.quick else 'quick'} form, {time.perf_counter() - started:.0f} s; "
             f"'other': foreign citations, failures not counted, failed requests.")
    (args.out / "table.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0 if clean and code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
