"""Every question-answering method, one record each: the one place that says what a method is called,
where its code and settings live, what it reads from the index, whether it needs an LLM, and which of
its settings ``--top-k`` and evaluation reach. The CLI, the Python API, evaluation, the service and
the page all read this table; adding a method is one record here plus its package.

Importing this module is cheap (no pydantic, numpy or method code): ``thinkgraph --help`` lists the
names from it. A method's code and settings model load when the method is built.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from thinkgraph.errors import ConfigError, UnknownMethodError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from thinkgraph.config import Settings
    from thinkgraph.methods.base import Method, MethodContext


class IndexPart(StrEnum):
    """What a method reads from the index besides passages and their entities."""

    TRIPLETS = "triplets"  # LLM or imported (subject, predicate, object) facts
    COMMUNITIES = "communities"  # Leiden communities with summaries
    PROPOSITIONS = "propositions"  # ToPG's propositions (or triplets standing in for them)
    SUMMARIES = "summaries"  # document summaries (A2RAG's gate)
    TYPED_KG = "typed_kg"  # an imported typed graph (or the corpus graph in typed form)


@dataclass(frozen=True, slots=True)
class MethodRecord:
    name: str
    summary: str  # one line, for help texts and the service's /v1/methods
    method: str  # "module:Class"; the class is built as Class(ctx, config)
    config: str  # "module:Model": its pydantic settings (unknown keys are refused)
    top_k: tuple[str, ...] = ()  # the settings `--top-k N` sets (how many passages it retrieves)
    eval_depth: tuple[str, ...] = ()  # the settings a retrieval-only eval deepens, for Recall@10
    eval_options: Mapping[str, Any] = field(default_factory=dict)  # retrieval-only eval's other defaults
    needs_llm: bool = False  # without an LLM it has neither an answer nor a retrieval of its own
    retrieves: bool = True  # False: closed book, nothing retrieved by definition (`none`)
    reads: frozenset[IndexPart] = frozenset()
    # The setting that, set to false, lets the method run without a part it reads (tog3's communities).
    switches: Mapping[IndexPart, str] = field(default_factory=dict)
    # A [section] of the settings whose values are the config's defaults (ppr: [retrieval]).
    defaults_from: str | None = None
    # The LLM steps whose streamed reply is the method's final answer (nothing after them replaces it),
    # each with whether the method takes the reply's [n] markers out: a service streams these live.
    # None for a2rag (Triple-Check may reject a draft), kgr and ircot's reader="cot" (the answer is read
    # from action replies) and topg's local mode (a JSON verdict).
    answer_steps: Mapping[str, bool] = field(default_factory=dict)
    # Settings that keep a question from changing the index, forced in evaluation so that no question's
    # effects reach another question or method (tog3's write-back of the triplets it extracts).
    isolation: Mapping[str, Any] = field(default_factory=dict)

    def method_class(self) -> type[Method]:
        return _load(self.method)  # type: ignore[no-any-return]

    def config_model(self) -> type[BaseModel]:
        return _load(self.config)  # type: ignore[no-any-return]

    def make_config(self, settings: Settings, options: Mapping[str, Any]) -> BaseModel:
        """The method's settings: its model's defaults (or the ``defaults_from`` section's values),
        then ``options``; a value out of range or an unknown key is one ConfigError naming it."""
        from pydantic import ValidationError

        from thinkgraph.config import READER_OPTIONS

        run_settings(settings, options)  # the reader's options (every method's) checked, then left out
        model = self.config_model()
        base = getattr(settings, self.defaults_from).model_dump() if self.defaults_from else {}
        for key, value in options.items():  # pydantic takes true for 1: "-o horizon=true" ran one round
            annotation = model.model_fields[key].annotation if key in model.model_fields else None
            if isinstance(value, bool) and annotation in (int, float):
                kind = "integer" if annotation is int else "number"
                raise ConfigError(f"{self.name} option {key}: Input should be a valid {kind} (given {value!r})")
        try:
            return model.model_validate({**base, **{k: v for k, v in options.items() if k not in READER_OPTIONS}})
        except ValidationError as exc:
            first = exc.errors()[0]
            if not first["loc"]:  # a check of the options together (a model validator's ValueError)
                raise ConfigError(f"{self.name} options: {first['msg'].removeprefix('Value error, ')}") from None
            where = ".".join(map(str, first["loc"]))
            if first["type"] == "extra_forbidden":  # pydantic says "Extra inputs are not permitted"
                known = ", ".join(sorted([*model.model_fields, *READER_OPTIONS]))
                raise ConfigError(f"{self.name} has no option {where}; its options: {known}") from None
            raise ConfigError(f"{self.name} option {where}: {_said(first)}") from None

    def needs(self, config: BaseModel) -> frozenset[IndexPart]:
        """What this configuration reads: ``reads`` less the parts switched off."""
        return frozenset(p for p in self.reads if getattr(config, self.switches.get(p, ""), True) is not False)

    def build(self, ctx: MethodContext, config: BaseModel) -> Method:
        return self.method_class()(ctx, config)  # type: ignore[call-arg]


def _load(target: str) -> Any:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


_PASSAGES = "thinkgraph.methods.passages"
CATALOG: tuple[MethodRecord, ...] = (
    MethodRecord("none", "the LLM alone, no retrieval (closed book)", "thinkgraph.methods.none:NoRetrievalMethod",
                 "thinkgraph.methods.none:NoneConfig", needs_llm=True, retrieves=False,
                 answer_steps={"answer.closed_book": True}),  # (its reader takes markers out too)
    MethodRecord("naive", "dense passage retrieval, then an answer citing the passages",
                 f"{_PASSAGES}:NaiveMethod", f"{_PASSAGES}:NaiveConfig", top_k=("top_k",), eval_depth=("top_k",),
                 answer_steps={"answer.from_passages": True}),
    MethodRecord("ppr", "personalized PageRank over entities and passages (HippoRAG-style), no LLM needed",
                 f"{_PASSAGES}:PPRMethod", f"{_PASSAGES}:PPRConfig", top_k=("top_k",), eval_depth=("top_k",),
                 defaults_from="retrieval", answer_steps={"answer.from_passages": True}),
    MethodRecord("hybrid", "BM25 fused with dense passage retrieval", f"{_PASSAGES}:HybridMethod",
                 f"{_PASSAGES}:HybridConfig", top_k=("top_k",), eval_depth=("top_k",),
                 answer_steps={"answer.from_passages": True}),
    MethodRecord("a2rag", "A2RAG: gate, local -> bridge -> PPR retrieval, Triple-Check, rewrite and retry",
                 "thinkgraph.methods.a2rag:A2RAGMethod", "thinkgraph.methods.a2rag:A2RAGConfig",
                 top_k=("evidence_chunks",), eval_depth=("evidence_chunks",),
                 eval_options={"gate": False},  # the gate is answer-level control, not retrieval
                 reads=frozenset({IndexPart.TRIPLETS, IndexPart.SUMMARIES})),
    MethodRecord("topg", "ToPG: Suggestion-Selection over a proposition graph (modes naive, local, global)",
                 "thinkgraph.methods.topg:ToPGMethod", "thinkgraph.methods.topg:ToPGConfig", eval_depth=("k",),
                 # (global mode partitions the proposition graph itself, 10-150 nodes; not the index's communities)
                 reads=frozenset({IndexPart.PROPOSITIONS}),
                 # (topg.answer: local mode's reader, reader="shared")
                 answer_steps={"topg.naive_answer": True, "topg.answer": True, "topg.report": False}),
    MethodRecord("tog3", "Think-on-Graph 3.0: the MACER loop over chunks, triplets and communities",
                 "thinkgraph.methods.tog3:ToG3Method", "thinkgraph.methods.tog3:ToG3Config",
                 top_k=("top_k", "context_passages"), eval_depth=("top_k", "context_passages"),
                 reads=frozenset({IndexPart.TRIPLETS, IndexPart.COMMUNITIES}),
                 switches={IndexPart.COMMUNITIES: "use_communities"}, answer_steps={"tog3.final": True},
                 isolation={"write_triplets": False}),
    MethodRecord("ircot", "IRCoT: retrieval interleaved with chain-of-thought", "thinkgraph.methods.ircot:IRCoTMethod",
                 "thinkgraph.methods.ircot:IRCoTConfig", top_k=("max_passages",), needs_llm=True,
                 answer_steps={"answer.from_passages": True}),  # its reader (reader="separate", the default)
    MethodRecord("kgr", "KG-grounded CoT / ToT / GoT reasoning by agent actions or automatic exploration",
                 "thinkgraph.methods.kgr:KGRMethod", "thinkgraph.methods.kgr:KGRConfig", needs_llm=True,
                 reads=frozenset({IndexPart.TYPED_KG}),
                 answer_steps={"kgr.read": True}),  # the reader on a corpus-built index (reader="shared")
    MethodRecord("kg-textrag", "text RAG over a typed graph: the texts of the nodes nearest the question",
                 "thinkgraph.methods.kgr.baselines:KGTextRAGMethod", "thinkgraph.methods.kgr.baselines:KGRagConfig",
                 top_k=("top_k",), needs_llm=True, reads=frozenset({IndexPart.TYPED_KG}),
                 answer_steps={"kg.text_rag": False}),
    MethodRecord("kg-graphrag", "graph RAG over a typed graph: the nearest nodes with their one-hop neighbours",
                 "thinkgraph.methods.kgr.baselines:KGGraphRAGMethod", "thinkgraph.methods.kgr.baselines:KGRagConfig",
                 top_k=("top_k",), needs_llm=True, reads=frozenset({IndexPart.TYPED_KG}),
                 answer_steps={"kg.graph_rag": False}),
)
DEFAULT_METHOD = "ppr"  # the project's strongest retrieval, and it needs no LLM
# Every method's final-answer steps (a step shared by methods, as answer.from_passages, appears once).
ANSWER_STEPS: Mapping[str, bool] = {step: strip for r in CATALOG for step, strip in r.answer_steps.items()}
METHOD_NAMES: tuple[str, ...] = tuple(r.name for r in CATALOG)
_BY_NAME = {r.name: r for r in CATALOG}


def get(name: str) -> MethodRecord:
    record = _BY_NAME.get(name)
    if record is None:
        raise UnknownMethodError(f"unknown method {name!r}; valid methods: {', '.join(METHOD_NAMES)}")
    return record


def top_k_options(name: str, top_k: int | None, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with ``top_k`` mapped onto the method's own settings (explicit options win)."""
    if top_k is None:
        return dict(options)
    if top_k < 1:
        raise ConfigError(f"top_k must be at least 1, not {top_k}")
    return {**dict.fromkeys(get(name).top_k, top_k), **options}



def _said(error: Any) -> str:
    """pydantic's message with the value given ("maybe" for a boolean), which it leaves out."""
    return f"{error['msg']} (given {error['input']!r})" if "input" in error else error["msg"]

def run_settings(settings: Settings, options: Mapping[str, Any]) -> Settings:
    """The settings of one run: ``settings`` with the options every method takes for its reader
    ([reader], config.READER_OPTIONS) applied; ``settings`` itself when the options hold none."""
    from pydantic import ValidationError

    from thinkgraph.config import READER_OPTIONS, ReaderSettings

    given = {k: v for k, v in options.items() if k in READER_OPTIONS}
    if not given:
        return settings
    try:
        reader = ReaderSettings.model_validate({**settings.reader.model_dump(), **given})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"option {'.'.join(map(str, first['loc']))}: {_said(first)}") from None
    return settings.model_copy(update={"reader": reader})


def make_method(name: str, ctx: MethodContext, **options: Any) -> Method:
    """The method ``name`` with ``options`` over its defaults (an unknown name or a bad option is a
    one-line error; an error inside a constructor is a bug and is not reported as a bad option); the
    reader's options among them set ``ctx.settings``'s."""
    record = get(name)
    ctx.settings = run_settings(ctx.settings, options)
    return record.build(ctx, record.make_config(ctx.settings, options))
