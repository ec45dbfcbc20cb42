"""Usage accounting per step, per question (scope) and per run, and the run budget."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from thinkgraph.errors import BudgetExceededError
from thinkgraph.models import Cost

_SCOPES: contextvars.ContextVar[tuple[Cost, ...]] = contextvars.ContextVar("thinkgraph_cost_scopes", default=())
# Callbacks told of every LLM call made in the current context (a service streams them as events).
_LISTENERS: contextvars.ContextVar[tuple[Callable[[str, Cost], None], ...]] = contextvars.ContextVar(
    "thinkgraph_call_listeners", default=())

# Callbacks given each streamed piece of an answer as the model writes it: callback(step, text).
_TOKEN_LISTENERS: contextvars.ContextVar[tuple[Callable[[str, str], None], ...]] = contextvars.ContextVar(
    "thinkgraph_token_listeners", default=())

UsageSink = Callable[[str, Cost], None]


@dataclass(slots=True)
class UsageMeter:
    budget_calls: int | None = None
    budget_tokens: int | None = None
    sink: UsageSink | None = None  # e.g. persists usage into the index for `inspect`
    run: Cost = field(default_factory=Cost)
    steps: dict[str, Cost] = field(default_factory=dict)
    truncations: int = 0
    parse_failures: int = 0  # structured replies still unusable after the bounded repairs
    repairs: int = 0  # re-asks after an unusable structured reply
    format_refusals: int = 0  # structured-output forms the server refused (each one steps down a dialect)
    cut_replies: int = 0  # replies far longer than their completion cap (the server ignored it), cut

    def check_budget(self) -> None:
        if self.budget_calls is not None and self.run.calls >= self.budget_calls:
            raise BudgetExceededError(f"LLM call budget of {self.budget_calls} calls is spent")
        if self.budget_tokens is not None and self.run.total_tokens >= self.budget_tokens:
            raise BudgetExceededError(f"LLM token budget of {self.budget_tokens} tokens is spent")

    def record(self, step: str, cost: Cost) -> None:
        self.run.add(cost)
        self.steps.setdefault(step, Cost()).add(cost)
        for scope in _SCOPES.get():
            scope.add(cost)
        if self.sink is not None and (cost.calls or cost.cached_calls):
            self.sink(step, cost)
        for listener in _LISTENERS.get():
            listener(step, cost)

    @contextmanager
    def scope(self) -> Iterator[Cost]:
        """Accumulates every call made inside the block (also in tasks it starts) into one Cost."""
        cost = Cost()
        token = _SCOPES.set((*_SCOPES.get(), cost))
        try:
            yield cost
        finally:
            _SCOPES.reset(token)


@contextmanager
def listen(callback: Callable[[str, Cost], None]) -> Iterator[None]:
    """Call ``callback(step, cost)`` for every LLM call made inside the block (and tasks it starts)."""
    token = _LISTENERS.set((*_LISTENERS.get(), callback))
    try:
        yield
    finally:
        _LISTENERS.reset(token)


@contextmanager
def listen_tokens(callback: Callable[[str, str], None]) -> Iterator[None]:
    """Call ``callback(step, text)`` with each piece of every answer-kind completion made inside the
    block, as the model streams it (a cached answer arrives as one piece)."""
    token = _TOKEN_LISTENERS.set((*_TOKEN_LISTENERS.get(), callback))
    try:
        yield
    finally:
        _TOKEN_LISTENERS.reset(token)


def token_listeners() -> tuple[Callable[[str, str], None], ...]:
    return _TOKEN_LISTENERS.get()
