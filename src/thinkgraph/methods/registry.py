"""Method names to constructors: an explicit table, so an unknown name is an error listing the valid ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from thinkgraph.errors import UnknownMethodError
from thinkgraph.methods.base import Method, MethodContext
from thinkgraph.methods.none import NoRetrievalMethod
from thinkgraph.methods.passages import naive_method, ppr_method

_FACTORIES: dict[str, Callable[..., Method]] = {
    "none": NoRetrievalMethod,
    "naive": naive_method,
    "ppr": ppr_method,
}
METHOD_NAMES = tuple(_FACTORIES)
DEFAULT_METHOD = "ppr"


def make_method(name: str, ctx: MethodContext, **options: Any) -> Method:
    factory = _FACTORIES.get(name)
    if factory is None:
        raise UnknownMethodError(f"unknown method {name!r}; valid methods: {', '.join(METHOD_NAMES)}")
    return factory(ctx, **options)
