"""Listeners told of every trace step as a method records it, so that a service can stream the steps
while the method runs (not only in the final Answer). Like ``llm.accounting.listen``, the listeners
live in a context variable: they hear the steps made in the block and in the tasks it starts, and no
other question's steps."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from thinkgraph.models import TraceStep

StepListener = Callable[["TraceStep"], None]
_LISTENERS: contextvars.ContextVar[tuple[StepListener, ...]] = contextvars.ContextVar(
    "thinkgraph_step_listeners", default=())


def emit(step: TraceStep) -> None:
    """Tell the listeners of the current context about a step (a no-op when none listens)."""
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
