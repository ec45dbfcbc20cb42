"""The robustness tests record what they measured (runs, lost, duplicated, tracebacks, HTTP 500s,
wrong exits, leaked secrets) as junit properties; benchmarks/robustness.py runs them and prints the table."""

from __future__ import annotations

from collections.abc import Callable

import pytest

Figures = Callable[..., None]


@pytest.fixture
def figures(record_property: Callable[[str, object], None]) -> Figures:
    """``figures("scenario name", runs=20, lost=0, ...)``: recorded before the test asserts, so a failing
    scenario still shows its numbers."""

    def record(scenario: str, **numbers: float) -> None:
        record_property("scenario", scenario)
        for name, value in numbers.items():
            record_property(name, value)

    return record
