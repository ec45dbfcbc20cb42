"""Progress of `thinkgraph index` on stderr: bars on a terminal, plain lines elsewhere (CI, cron, a
pipe), where bars would print nothing at all. The indexer calls ``progress(stage, done, total)``."""

from __future__ import annotations

import threading
import time
from typing import Any

from rich.console import Console

from thinkgraph.cli.output import err

LINE_SECONDS = 5.0  # plain lines: one when a stage starts, then at most one per stage this often


class RichProgress:
    def __init__(self, progress: Any) -> None:  # a rich.progress.Progress
        self.progress = progress
        self.tasks: dict[str, Any] = {}

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        if stage not in self.tasks:
            self.tasks[stage] = self.progress.add_task(stage, total=total)
        self.progress.update(self.tasks[stage], completed=done, total=total)


class LineProgress:
    """``[12.3 s] documents: 64 done`` lines: when a stage starts, then at most every ``every_s``
    seconds per stage, and each stage's last count when the run ends (if not printed already)."""

    def __init__(self, console: Console, every_s: float = LINE_SECONDS) -> None:
        self.console = console
        self.every_s = every_s
        self.started = time.monotonic()
        self.printed_at: dict[str, float] = {}
        self.latest: dict[str, tuple[int, int | None, bool]] = {}  # stage -> (done, total, printed)
        self._lock = threading.Lock()

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        with self._lock:
            due = stage not in self.printed_at or now - self.printed_at[stage] >= self.every_s
            self.latest[stage] = (done, total, due)
            if due:
                self.printed_at[stage] = now
                self._line(stage, done, total, now)

    def finish(self) -> None:
        with self._lock:
            for stage, (done, total, printed) in self.latest.items():
                if not printed:
                    self._line(stage, done, total, time.monotonic())

    def _line(self, stage: str, done: int, total: int | None, now: float) -> None:
        count = f"{done}/{total}" if total else (f"{done} done" if done else "started")
        self.console.print(f"[{now - self.started:.1f} s] {stage}: {count}", markup=False, highlight=False)


class progress_bars:  # noqa: N801 - used as a context manager
    """Bars when stderr is a terminal, lines when it is not; nothing when ``disable``."""

    def __init__(self, disable: bool) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn

        self.lines = LineProgress(err) if not disable and not err.is_terminal else None
        self.rich = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                             MofNCompleteColumn(), console=err, disable=disable or not err.is_terminal,
                             transient=True)

    def __enter__(self) -> RichProgress | LineProgress:
        if self.lines is not None:
            return self.lines
        self.rich.__enter__()
        return RichProgress(self.rich)

    def __exit__(self, *exc: object) -> None:
        if self.lines is not None:
            self.lines.finish()
            return
        self.rich.__exit__(*exc)  # type: ignore[arg-type]
