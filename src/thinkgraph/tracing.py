"""A question's trace: the steps a method records, in order. Recording a step (appending it to the
question's ``Trace``, which the method finds on its context) is when listeners hear of it, so that a
service can stream the steps while the method runs and not only in the final Answer. Building a
``TraceStep`` records nothing: a step that never joins a question's trace is heard by nobody.

Like ``llm.accounting.listen``, the listeners live in a context variable: they hear the steps
recorded in the block and in the tasks it starts, and no other question's steps."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, SupportsIndex

if TYPE_CHECKING:
    from thinkgraph.models import TraceStep

StepListener = Callable[["TraceStep"], None]
_LISTENERS: contextvars.ContextVar[tuple[StepListener, ...]] = contextvars.ContextVar(
    "thinkgraph_step_listeners", default=())


class Trace(list["TraceStep"]):
    """One question's steps. ``append``, ``extend``, ``+=`` and ``insert`` record: each new step is
    told to the listeners of the current context at that moment."""

    def append(self, step: TraceStep) -> None:
        super().append(step)
        _tell(step)

    def extend(self, steps: Iterable[TraceStep]) -> None:
        for step in list(steps):  # a copy: ``trace.extend(trace)`` must not loop for ever
            self.append(step)

    def __iadd__(self, steps: Iterable[TraceStep]) -> Trace:  # type: ignore[override, misc]
        self.extend(steps)
        return self

    def insert(self, index: SupportsIndex, step: TraceStep) -> None:
        super().insert(index, step)
        _tell(step)


def _tell(step: TraceStep) -> None:
    for listener in _LISTENERS.get():
        listener(step)


@contextmanager
def listen_steps(callback: StepListener) -> Iterator[None]:
    """Call ``callback(step)`` for every trace step recorded inside the block (and tasks it starts)."""
    token = _LISTENERS.set((*_LISTENERS.get(), callback))
    try:
        yield
    finally:
        _LISTENERS.reset(token)
