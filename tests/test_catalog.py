"""The method catalog (one record per method) and the run envelope every method call goes through."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pydantic import BaseModel

from support import FIXTURES, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.errors import ConfigError, UnknownMethodError
from thinkgraph.methods import catalog
from thinkgraph.methods.base import MethodContext
from thinkgraph.methods.passages import NaiveConfig
from thinkgraph.methods.run import EMPTY_ANSWER_MESSAGE, run_method
from thinkgraph.models import Answer, AnswerStatus, Citation, TraceStep
from thinkgraph.testing import ScriptedBackend
from thinkgraph.tracing import listen_steps


@pytest.fixture(scope="module")
def index_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("catalog") / "i.db"
    with ThinkGraph(path, settings=Settings(), embedder=HashEmbedder()) as tg:
        tg.index([FIXTURES / "corpus_small.jsonl"], openie=FIXTURES / "openie_sample.jsonl")
    return path


def test_every_record_names_a_method_class_and_a_strict_settings_model() -> None:
    assert len(set(catalog.METHOD_NAMES)) == len(catalog.CATALOG) and catalog.DEFAULT_METHOD in catalog.METHOD_NAMES
    for record in catalog.CATALOG:
        model = record.config_model()
        assert issubclass(model, BaseModel) and model.model_config.get("extra") == "forbid", record.name
        assert callable(record.method_class()) and record.summary, record.name
        defaults = record.make_config(Settings(), {})
        for key in (*record.top_k, *record.eval_depth, *record.eval_options):
            assert key in model.model_fields, (record.name, key)  # --top-k and eval reach real settings
        assert all(getattr(defaults, switch) is True for switch in record.switches.values()), record.name


def test_the_default_method_retrieves_without_an_llm() -> None:
    default = catalog.get(catalog.DEFAULT_METHOD)
    assert not default.needs_llm and default.retrieves


def test_unknown_names_and_bad_options_are_one_line_errors() -> None:
    with pytest.raises(UnknownMethodError, match="valid methods: none, naive, ppr"):
        catalog.get("pagerank")
    settings = Settings()
    with pytest.raises(ConfigError, match="ircot has no option max_step; its options: .*max_steps"):
        catalog.get("ircot").make_config(settings, {"max_step": 3})
    with pytest.raises(ConfigError, match="ppr option damping: Input should be less than 1"):
        catalog.get("ppr").make_config(settings, {"damping": 7})
    with pytest.raises(ConfigError, match=r"tog3 option restated_query_again: Input should be a valid boolean.*"
                                          r"\(given 'maybe'\)$"):
        catalog.get("tog3").make_config(settings, {"restated_query_again": "maybe"})
    with pytest.raises(ConfigError, match=r"\(given 7\)$"):
        catalog.get("ppr").make_config(settings, {"damping": 7})
    with pytest.raises(ConfigError, match=r"tog3 option horizon: Input should be a valid integer \(given True\)$"):
        catalog.get("tog3").make_config(settings, {"horizon": True})  # pydantic alone reads true as 1
    with pytest.raises(ConfigError, match=r"ppr option damping: Input should be a valid number \(given False\)$"):
        catalog.get("ppr").make_config(settings, {"damping": False})
    assert catalog.get("tog3").make_config(settings, {"horizon": 2, "restated_query_again": True}).horizon == 2  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="kg-textrag option top_k"):
        catalog.get("kg-textrag").make_config(settings, {"top_k": 0})
    with pytest.raises(ConfigError, match="top_k must be at least 1"):
        catalog.top_k_options("naive", 0, {})


def test_top_k_maps_onto_each_methods_own_settings_and_explicit_options_win() -> None:
    assert catalog.top_k_options("tog3", 2, {}) == {"top_k": 2, "context_passages": 2}
    assert catalog.top_k_options("a2rag", 2, {"evidence_chunks": 7}) == {"evidence_chunks": 7}
    assert catalog.top_k_options("kgr", 2, {"steps": 3}) == {"steps": 3}  # its passages follow from the walk


def test_defaults_from_a_settings_section_follow_the_configuration() -> None:
    settings = Settings()
    settings.retrieval.damping = 0.7
    ppr = catalog.get("ppr")
    assert ppr.make_config(settings, {}).damping == 0.7
    assert ppr.make_config(settings, {"damping": 0.3}).damping == 0.3


def test_needs_drops_what_a_switch_turns_off() -> None:
    tog3 = catalog.get("tog3")
    on = tog3.make_config(Settings(), {})
    off = tog3.make_config(Settings(), {"use_communities": False})
    assert catalog.IndexPart.COMMUNITIES in tog3.needs(on) and catalog.IndexPart.COMMUNITIES not in tog3.needs(off)


def test_a_type_error_inside_a_constructor_is_a_bug_not_a_bad_option(index_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from thinkgraph.methods import passages

    def broken(self: object, ctx: object, config: object) -> None:
        raise TypeError("a bug in the constructor")

    monkeypatch.setattr(passages.NaiveMethod, "__init__", broken)
    with ThinkGraph.open(index_path, settings=Settings(), embedder=HashEmbedder()) as tg:
        ctx = MethodContext(tg.store, tg.view, tg.settings)
        with pytest.raises(TypeError, match="a bug in the constructor"):
            catalog.make_method("naive", ctx)


# The run envelope --------------------------------------------------------------------------------

@dataclass
class ScriptedMethod:
    """A method double: records two steps and returns what the test gives it."""

    ctx: MethodContext
    config: BaseModel = field(default_factory=NaiveConfig)
    reply: str | None = "an answer"
    citations: list[Citation] = field(default_factory=list)
    name: str = "naive"  # a catalog name: the envelope reads the record

    async def answer(self, question: str) -> Answer:
        self.ctx.trace.append(TraceStep("retriever", "look"))
        if self.ctx.llm is not None:
            await self.ctx.llm.text([{"role": "user", "content": question}], step="double", kind="answer")
        self.ctx.trace.append(TraceStep("responder", "say"))
        return Answer(question=question, method=self.name, text=self.reply, status=AnswerStatus.ANSWERED,
                      citations=list(self.citations), trace=self.ctx.trace)


def _context(tg: ThinkGraph, *, llm: bool) -> MethodContext:
    return MethodContext(tg.store, tg.view, tg.settings, tg.llm if llm else None)


def test_the_envelope_times_meters_traces_and_closes_with_the_endpoint_step(index_path: Path) -> None:
    backend = ScriptedBackend(script=["fine"])
    with ThinkGraph.open(index_path, settings=Settings(), embedder=HashEmbedder(), backend=backend) as tg:
        heard: list[str] = []
        with listen_steps(lambda step: heard.append(step.action)):
            answer = asyncio.run(run_method(ScriptedMethod(_context(tg, llm=True)), "Who?"))
    assert [s.action for s in answer.trace] == heard == ["look", "say", "endpoint"]
    assert answer.cost.calls == 1 and answer.cost.seconds > 0 and answer.status == AnswerStatus.ANSWERED
    assert json.loads(json.dumps(answer.to_dict(), default=str))["status"] == "answered"


def test_the_envelope_makes_an_empty_answer_a_failure_and_cuts_citations_to_top_k(index_path: Path) -> None:
    with ThinkGraph.open(index_path, settings=Settings(), embedder=HashEmbedder()) as tg:
        chunk = next(tg.store.iter_nodes("chunk"))
        cites = [Citation(str(chunk.props["doc_id"]), chunk.id, 0, len(chunk.text), chunk.text) for _ in range(3)]
        empty = asyncio.run(run_method(ScriptedMethod(_context(tg, llm=False), reply="  "), "Who?"))
        cut = asyncio.run(run_method(ScriptedMethod(_context(tg, llm=False), citations=cites), "Who?", top_k=2))
    assert empty.status == AnswerStatus.FAILED and empty.message == EMPTY_ANSWER_MESSAGE
    assert empty.cost.calls == 0 and [s.action for s in empty.trace] == ["look", "say"]  # no LLM, no endpoint step
    assert len(cut.citations) == 2 and all(len(c.quote) <= len(chunk.text) for c in cut.citations)


@pytest.mark.parametrize("reply", ['<answer>"', "<answer></answer>", "[/INST] ...", "**"])
def test_an_answer_of_markup_alone_is_a_failure(index_path: Path, reply: str) -> None:
    """What a tiny model returns when it stops at the tag (seen with Gemma 3 270M under ircot)."""
    with ThinkGraph.open(index_path, settings=Settings(), embedder=HashEmbedder()) as tg:
        answer = asyncio.run(run_method(ScriptedMethod(_context(tg, llm=False), reply=reply), "Who?"))
        kept = asyncio.run(run_method(ScriptedMethod(_context(tg, llm=False), reply="<answer>1887</answer>"), "When?"))
    assert answer.status == AnswerStatus.FAILED and answer.message == EMPTY_ANSWER_MESSAGE
    assert answer.text is None and answer.stats["unusable_reply"] == reply
    assert kept.status == AnswerStatus.ANSWERED


def test_a_method_that_needs_an_llm_is_refused_before_it_runs(index_path: Path) -> None:
    with ThinkGraph.open(index_path, settings=Settings(), embedder=HashEmbedder()) as tg:
        method = ScriptedMethod(_context(tg, llm=False), name="ircot")
        with pytest.raises(ConfigError, match="method 'ircot' needs an LLM endpoint"):
            asyncio.run(run_method(method, "Who?"))
    assert method.ctx.trace == []  # the method never ran


def test_retrieve_returns_the_evidence_without_calling_a_configured_llm(open_bridge) -> None:  # noqa: ANN001
    backend = ScriptedBackend(script=[])  # any call would fail: the script is empty
    tg = open_bridge(backend)
    found = tg.retrieve("Where is the company that Alice Stone founded based?", "a2rag", gate=False)
    assert found.status == AnswerStatus.EVIDENCE_ONLY and found.citations and backend.requests == []


def test_the_answer_steps_named_in_the_catalog_are_the_methods_own() -> None:
    from thinkgraph.methods.none import NONE_STEP
    from thinkgraph.methods.synthesis import ANSWER_STEP

    assert catalog.ANSWER_STEPS[ANSWER_STEP] is True and catalog.ANSWER_STEPS[NONE_STEP] is True
    from thinkgraph.methods.kgr.reading import READ_STEP
    from thinkgraph.methods.topg.reading import ANSWER_STEP as TOPG_ANSWER_STEP

    assert not catalog.get("a2rag").answer_steps  # an answer that is not a stream (it counts once verified)
    assert catalog.get("kgr").answer_steps == {READ_STEP: True}  # its reader's (reader="shared")
    assert catalog.ANSWER_STEPS[TOPG_ANSWER_STEP] is True
    assert catalog.get("ircot").answer_steps == {ANSWER_STEP: True}  # its reader's (reader="separate")
