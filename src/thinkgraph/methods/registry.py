"""Method names to constructors: an explicit table, so an unknown name is an error listing the valid ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from thinkgraph.errors import ConfigError, UnknownMethodError

if TYPE_CHECKING:
    from thinkgraph.methods.base import Method, MethodContext

# Each factory imports its method when called: `thinkgraph ask -m ppr` then loads neither the LLM
# client nor the agent methods (their imports were a third of a cold CLI ask).


def _config(name: str, model: type[BaseModel], options: dict[str, Any]) -> Any:
    try:
        return model(**options)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"{name} option {'.'.join(map(str, first['loc']))}: {first['msg']}") from exc


def _none(ctx: MethodContext, **options: Any) -> Method:
    from thinkgraph.methods.none import NoRetrievalMethod

    return NoRetrievalMethod(ctx, **options)


def _passages(kind: str) -> Callable[..., Method]:
    def make(ctx: MethodContext, **options: Any) -> Method:
        from thinkgraph.methods import passages

        return {"naive": passages.naive_method, "ppr": passages.ppr_method,
                "hybrid": passages.hybrid_method}[kind](ctx, **options)

    return make


def a2rag_method(ctx: MethodContext, **options: Any) -> Method:
    from thinkgraph.methods.a2rag import A2RAGConfig, A2RAGMethod

    return A2RAGMethod(ctx, _config("a2rag", A2RAGConfig, options))


def tog3_method(ctx: MethodContext, **options: Any) -> Method:
    from thinkgraph.methods.tog3 import ToG3Config, ToG3Method

    return ToG3Method(ctx, _config("tog3", ToG3Config, options))


def topg_method(ctx: MethodContext, **options: Any) -> Method:
    from thinkgraph.methods.topg import ToPGConfig, ToPGMethod

    return ToPGMethod(ctx, _config("topg", ToPGConfig, options))


def kgr_method(ctx: MethodContext, **options: Any) -> Method:
    from thinkgraph.methods.kgr import KGRConfig, KGRMethod

    return KGRMethod(ctx, _config("kgr", KGRConfig, options))


def ircot_method(ctx: MethodContext, **options: Any) -> Method:
    from thinkgraph.methods.ircot import IRCoTMethod

    return IRCoTMethod(ctx, **options)


def kg_text_rag(ctx: MethodContext, **options: Any) -> Method:
    from thinkgraph.methods.kgr.baselines import KGRagMethod

    return KGRagMethod(ctx, "text", **options)


def kg_graph_rag(ctx: MethodContext, **options: Any) -> Method:
    from thinkgraph.methods.kgr.baselines import KGRagMethod

    return KGRagMethod(ctx, "graph", **options)


_FACTORIES: dict[str, Callable[..., Method]] = {
    "none": _none,
    "naive": _passages("naive"),
    "ppr": _passages("ppr"),
    "hybrid": _passages("hybrid"),
    "a2rag": a2rag_method,
    "topg": topg_method,
    "tog3": tog3_method,
    "ircot": ircot_method,
    "kgr": kgr_method,
    "kg-textrag": kg_text_rag,
    "kg-graphrag": kg_graph_rag,
}
METHOD_NAMES = tuple(_FACTORIES)
DEFAULT_METHOD = "ppr"

# `--top-k N` (and the service's top_k): the one place that says which of a method's own settings
# set how many passages it retrieves. Every method's returned passages are also capped at N, so
# methods whose passage count follows from other settings (topg's propositions, kgr's walk) return
# at most N as well.
TOP_K_SETTINGS: dict[str, tuple[str, ...]] = {
    "naive": ("top_k",), "ppr": ("top_k",), "hybrid": ("top_k",), "a2rag": ("evidence_chunks",),
    "tog3": ("top_k", "context_passages"), "ircot": ("max_passages",),
    "kg-textrag": ("top_k",), "kg-graphrag": ("top_k",), "topg": (), "kgr": (), "none": (),
}
# Methods with no answer and no retrieval of their own without an LLM.
NEEDS_LLM = frozenset({"none", "ircot", "kgr", "kg-textrag", "kg-graphrag"})


def top_k_options(name: str, top_k: int | None, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with ``top_k`` mapped onto the method's own settings (explicit options win)."""
    if top_k is None:
        return dict(options)
    if top_k < 1:
        raise ConfigError(f"top_k must be at least 1, not {top_k}")
    return {**dict.fromkeys(TOP_K_SETTINGS.get(name, ()), top_k), **options}


def config_model(name: str) -> type[BaseModel] | None:
    """The pydantic settings model of a method, where it has one (for forms and documentation)."""
    from thinkgraph.methods.a2rag import A2RAGConfig
    from thinkgraph.methods.kgr import KGRConfig
    from thinkgraph.methods.tog3 import ToG3Config
    from thinkgraph.methods.topg import ToPGConfig

    return {"a2rag": A2RAGConfig, "tog3": ToG3Config, "topg": ToPGConfig, "kgr": KGRConfig}.get(name)


def make_method(name: str, ctx: MethodContext, **options: Any) -> Method:
    factory = _FACTORIES.get(name)
    if factory is None:
        raise UnknownMethodError(f"unknown method {name!r}; valid methods: {', '.join(METHOD_NAMES)}")
    try:
        return factory(ctx, **options)
    except TypeError as exc:  # an option the method does not take
        raise ConfigError(f"method {name!r} does not take option(s) {sorted(options)}: {exc}") from exc
