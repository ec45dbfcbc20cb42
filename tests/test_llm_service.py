"""The LLM service with the scripted backend: cache, repair, budget, accounting, context fitting."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel

from thinkgraph.asyncutil import run_sync
from thinkgraph.config import LLMSettings
from thinkgraph.errors import BudgetExceededError, CallBudgetReached, StructuredOutputError
from thinkgraph.llm.backend import ChatRequest, ChatResult
from thinkgraph.llm.context import fit_messages, prompt_tokens, upper_bound_tokens
from thinkgraph.llm.service import LLM, cache_key, json_schema_of
from thinkgraph.store.sqlite import SQLiteStore
from thinkgraph.testing import ScriptedBackend, ScriptExhaustedError
from thinkgraph.tokens import TokenCounter


class Verdict(BaseModel):
    ok: bool
    reason: str


def _llm(backend: ScriptedBackend, store: SQLiteStore | None = None, **settings: object) -> LLM:
    return LLM(backend, settings=LLMSettings(model="m", **settings), cache=store)


MSG = [{"role": "user", "content": "Is it fine?"}]


async def test_valid_json_first_time_is_cached(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "c.db")
    backend = ScriptedBackend.of(['{"ok": true, "reason": "fine"}'])
    llm = _llm(backend, store)
    assert await llm.json(MSG, Verdict, step="judge") == Verdict(ok=True, reason="fine")
    again = await _llm(ScriptedBackend(), store).json(MSG, Verdict, step="judge")  # no script left: cache
    assert again.reason == "fine"
    assert llm.meter.steps["judge"].calls == 1


async def test_the_first_value_that_fits_the_schema_is_taken() -> None:
    backend = ScriptedBackend.of(['Checks [1] and [2] passed: {"ok": true, "reason": "fine"} -- done'])
    verdict = await _llm(backend).json(MSG, Verdict, step="check")
    assert verdict == Verdict(ok=True, reason="fine") and len(backend.requests) == 1  # no repair needed


async def test_repair_prompt_after_invalid_reply() -> None:
    backend = ScriptedBackend.of(["I think it's fine", '{"ok": "maybe"}', '{"ok": false, "reason": "no"}'])
    llm = _llm(backend)
    assert (await llm.json(MSG, Verdict, step="judge")).ok is False
    assert len(backend.requests) == 3
    repair = backend.requests[1].messages
    assert repair[-2]["role"] == "assistant" and repair[-2]["content"] == "I think it's fine"
    assert "could not be used" in repair[-1]["content"] and '"reason"' in repair[-1]["content"]
    assert "field ok" in backend.requests[2].messages[-1]["content"]


async def test_failure_after_bounded_repairs_is_counted_and_not_cached(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "c.db")
    backend = ScriptedBackend.of(["nope", "still nope", "never"])
    llm = _llm(backend, store, max_repairs=2)
    with pytest.raises(StructuredOutputError, match="after 3 attempts"):
        await llm.json(MSG, Verdict, step="judge")
    assert llm.meter.parse_failures == 1
    with pytest.raises(ScriptExhaustedError):  # nothing cached: a new call goes to the model
        await llm.json(MSG, Verdict, step="judge")


async def test_text_replies_strip_reasoning_and_cache(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "c.db")
    backend = ScriptedBackend.of(["<think>hmm</think>Paris"])
    llm = _llm(backend, store)
    assert await llm.text(MSG, step="a") == "Paris"
    assert await llm.text(MSG, step="a") == "Paris"
    assert len(backend.requests) == 1 and llm.meter.steps["a"].cached_calls == 1


async def test_a_text_reply_the_caller_refuses_is_not_cached(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "c.db")
    backend = ScriptedBackend.of(["Is it fine?", "Yes, it is fine."])

    def usable(reply: str) -> bool:
        return reply != "Is it fine?"  # (an echo of the prompt)

    llm = _llm(backend, store)
    assert await llm.text(MSG, step="a", usable=usable) == "Is it fine?"  # returned: the caller decides
    assert await llm.text(MSG, step="a", usable=usable) == "Yes, it is fine."  # asked again, not read back
    assert await llm.text(MSG, step="a", usable=usable) == "Yes, it is fine."  # this one was kept
    assert len(backend.requests) == 2
    store.cache_put(cache_key("m", MSG, {"max_tokens": llm.settings.max_tokens.for_kind("answer"), "t":
                                         llm.settings.temperature, "seed": llm.settings.seed}), "Is it fine?")
    with pytest.raises(ScriptExhaustedError):  # a refused reply found in the cache is asked again
        await llm.text(MSG, step="a", usable=usable)


async def test_cache_key_depends_on_model_messages_and_params() -> None:
    base = cache_key("m", MSG, {"t": 0})
    assert base == cache_key("m", [dict(MSG[0])], {"t": 0})
    assert base != cache_key("m2", MSG, {"t": 0})
    assert base != cache_key("m", [{"role": "user", "content": "other"}], {"t": 0})
    assert base != cache_key("m", MSG, {"t": 1})


async def test_budget_stops_cleanly() -> None:
    backend = ScriptedBackend.of(["a", "b", "c"])
    llm = _llm(backend, budget_calls=2)
    await llm.text([{"role": "user", "content": "1"}], step="s")
    await llm.text([{"role": "user", "content": "2"}], step="s")
    with pytest.raises(BudgetExceededError, match="2 calls"):
        await llm.text([{"role": "user", "content": "3"}], step="s")
    assert len(backend.requests) == 2


async def test_per_question_call_limit_is_shared_by_tasks_and_nests() -> None:
    async def slow(request: ChatRequest) -> ChatResult:  # every call in flight at once before any ends
        await asyncio.sleep(0.01)
        return ChatResult(text=request.messages[-1]["content"])

    backend = ScriptedBackend()
    backend.chat = slow  # type: ignore[method-assign]
    llm = _llm(backend)
    with llm.meter.limit(3) as spent:
        results = await asyncio.gather(*(llm.text([{"role": "user", "content": str(i)}], step="s")
                                         for i in range(5)), return_exceptions=True)
        assert sum(isinstance(r, CallBudgetReached) for r in results) == 2 and spent.calls == 3
        with pytest.raises(CallBudgetReached, match="3 LLM calls"):
            await llm.text([{"role": "user", "content": "more"}], step="s")
    with llm.meter.limit(None):
        await llm.text([{"role": "user", "content": "after"}], step="s")  # the limit ended with its block
    assert llm.meter.run.calls == 4 and isinstance(CallBudgetReached("x"), BudgetExceededError)


async def test_token_budget() -> None:
    backend = ScriptedBackend.of(["a b c d e"] * 3)
    llm = _llm(backend, budget_tokens=5)
    await llm.text([{"role": "user", "content": "one two three"}], step="s")
    with pytest.raises(BudgetExceededError, match="token budget"):
        await llm.text([{"role": "user", "content": "next"}], step="s")


async def test_usage_per_step_scope_and_run() -> None:
    backend = ScriptedBackend.of(["x", "y z", "w"])
    llm = _llm(backend)
    with llm.meter.scope() as question_cost:
        await llm.text([{"role": "user", "content": "a"}], step="extract")
        await llm.text([{"role": "user", "content": "b"}], step="answer")
    await llm.text([{"role": "user", "content": "c"}], step="answer")
    assert question_cost.calls == 2 and question_cost.completion_tokens == 3
    assert llm.meter.steps["answer"].calls == 2 and llm.meter.run.calls == 3


async def test_prompt_is_cut_to_the_context_window(caplog: pytest.LogCaptureFixture) -> None:
    backend = ScriptedBackend.of(["ok"])
    llm = _llm(backend, context_window=300, max_tokens=100)
    long = "word " * 2000
    await llm.text([{"role": "system", "content": "Be brief."}, {"role": "user", "content": long}], step="s")
    sent = backend.requests[0].messages
    assert sent[0]["content"] == "Be brief."
    assert "truncated to fit" in sent[1]["content"]
    assert llm.counter.count(sent[1]["content"]) < 200
    assert llm.meter.truncations == 1 and "cut to fit" in caplog.text


class _CountingCounter(TokenCounter):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return super().count(text)


def test_a_prompt_whose_byte_count_fits_is_not_tokenised() -> None:
    counter = _CountingCounter()
    short = [{"role": "user", "content": "Who founded the Harbor Hill Observatory?"}]
    assert fit_messages(short, context_window=300, max_tokens=100, counter=counter) == (short, False)
    assert counter.calls == 0
    # over the byte bound, but its tokens fit: counted, and left whole
    words = [{"role": "user", "content": "observatory " * 20}]  # 240 bytes, 20 tokens
    assert upper_bound_tokens(words) > 200
    assert fit_messages(words, context_window=300, max_tokens=100, counter=counter) == (words, False)
    assert counter.calls > 0
    for text in ("déjà vu 東京 " * 5, "a", "x" * 50):  # the bound holds for any text
        assert upper_bound_tokens([{"role": "u", "content": text}]) >= prompt_tokens([{"role": "u", "content": text}],
                                                                                    counter)


def test_reply_schemas_are_made_once_per_model() -> None:
    class Reply(BaseModel):
        answer: str

    assert json_schema_of(Reply) is json_schema_of(Reply)
    assert json_schema_of(Reply) == Reply.model_json_schema()


async def test_concurrency_limit_is_respected() -> None:
    active = 0
    peak = 0

    class Slow:
        async def chat(self, request: ChatRequest) -> ChatResult:
            nonlocal active, peak
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.02)
            active -= 1
            return ChatResult(text="ok")

    llm = LLM(Slow(), settings=LLMSettings(model="m", concurrency=3))
    await asyncio.gather(*(llm.text([{"role": "user", "content": str(i)}], step="s") for i in range(12)))
    assert peak == 3


def test_run_sync_works_inside_a_running_loop() -> None:
    async def inner() -> int:
        return 7

    async def outer() -> int:
        return run_sync(inner())  # as a notebook would call the sync API

    assert asyncio.run(outer()) == 7
    assert run_sync(inner()) == 7


async def test_scripted_backend_rules_and_exceptions() -> None:
    backend = ScriptedBackend(script=[RuntimeError("boom")], rules=[("capital", "Paris")])
    llm = _llm(backend)
    assert await llm.text([{"role": "user", "content": "capital of France?"}], step="s") == "Paris"
    with pytest.raises(RuntimeError, match="boom"):
        await llm.text([{"role": "user", "content": "other"}], step="s")
