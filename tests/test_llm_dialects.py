"""Server dialects: structured output negotiated once per endpoint and model and remembered in the
index; refusals never retried as outages; per-kind completion caps, stop sequences, token streaming,
bounded reply size and secrets kept out of messages. Against a local server speaking the API."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from support import Behaviour, FakeOpenAIServer
from thinkgraph.config import CompletionCaps, LLMSettings
from thinkgraph.errors import LLMError, LLMUnavailableError, StructuredOutputError
from thinkgraph.llm.accounting import listen_tokens
from thinkgraph.llm.backend import retry_after_seconds
from thinkgraph.llm.dialects import is_refusal, recall_form, structured_fields
from thinkgraph.llm.service import LLM
from thinkgraph.store.sqlite import SQLiteStore


class Verdict(BaseModel):
    ok: bool
    reason: str = ""


MSG = [{"role": "user", "content": "Is it fine?"}]
GOOD = '{"ok": true, "reason": "fine"}'


def _llm(server: FakeOpenAIServer, store: SQLiteStore | None = None, **settings: Any) -> LLM:
    opts: dict[str, Any] = {"base_url": server.url, "model": "m", "backoff_s": 0.01, "timeout_s": 5.0,
                            "max_retries": 3} | settings
    return LLM.from_settings(LLMSettings(**opts), cache=store, memory=store)


def _form_of(payload: dict[str, Any]) -> str:
    if "format" in payload:
        return "ollama_format"
    rf = payload.get("response_format")
    if rf is None:
        return "none"
    if rf["type"] == "json_schema":
        return "json_schema"
    return "json_object_schema" if "schema" in rf else "json_object"


def llama_cpp_python(payload: dict[str, Any]) -> str | Behaviour:
    """What llama-cpp-python's server does: its request model rejects json_schema, wrapped in a 500."""
    if _form_of(payload) == "json_schema":
        return Behaviour(status=500, body=json.dumps({"error": {
            "message": "1 validation error: ('body', 'response_format', 'type') Input should be 'text' or "
                       "'json_object'", "type": "internal_server_error"}}))
    return GOOD


async def test_llama_cpp_refusal_steps_down_at_once_and_is_remembered(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "i.db")
    with FakeOpenAIServer() as server:
        server.responder = llama_cpp_python
        llm = _llm(server, store)
        assert (await llm.json(MSG, Verdict, step="v")).ok
        # one refused request, then the accepted form: the refusal was not retried as an outage
        assert [_form_of(r) for r in server.chat_requests] == ["json_schema", "json_object_schema"]
        assert llm.meter.format_refusals == 1 and llm.describe()["structured_output"] == "json_object_schema"
        assert recall_form(store, server.url, "m") == "json_object_schema"
        # a resumed run (a new client on the same index) does not probe again
        again = _llm(server, store)
        await again.json([{"role": "user", "content": "Another question?"}], Verdict, step="v")
        assert _form_of(server.chat_requests[-1]) == "json_object_schema" and len(server.chat_requests) == 3
    store.close()


@pytest.mark.parametrize(("status", "body"), [
    (400, '{"error": "response_format.type must be \'json_schema\' or \'text\'"}'),  # LM Studio's wording
    (422, '{"detail": [{"loc": ["body", "response_format"], "msg": "extra fields not permitted"}]}'),
    (501, "json_schema is not implemented"),
])
async def test_refusals_in_other_shapes_step_down(status: int, body: str) -> None:
    with FakeOpenAIServer() as server:
        server.responder = lambda p: Behaviour(status=status, body=body) if _form_of(p) == "json_schema" else GOOD
        llm = _llm(server)
        assert (await llm.json(MSG, Verdict, step="v")).ok
        assert len(server.chat_requests) == 2


async def test_server_that_refuses_every_form_still_answers_unconstrained() -> None:
    with FakeOpenAIServer() as server:
        server.responder = lambda p: Behaviour(status=400, body="unsupported response_format / format field") \
            if _form_of(p) != "none" else "Sure! " + GOOD + " Hope that helps."
        llm = _llm(server)
        assert (await llm.json(MSG, Verdict, step="v")).reason == "fine"
        assert [_form_of(r) for r in server.chat_requests] == [
            "json_schema", "json_object_schema", "ollama_format", "json_object", "none"]


async def test_plain_outage_on_a_structured_call_is_retried_not_stepped_down() -> None:
    with FakeOpenAIServer() as server:
        server.push(Behaviour(status=503, body="upstream busy"), Behaviour(status=500, body="oops"),
                    Behaviour(content=GOOD))
        llm = _llm(server)
        assert (await llm.json(MSG, Verdict, step="v")).ok
        assert [_form_of(r) for r in server.chat_requests] == ["json_schema"] * 3
        assert llm.meter.format_refusals == 0


async def test_concurrent_refusals_step_down_one_form_only() -> None:
    with FakeOpenAIServer() as server:
        server.responder = llama_cpp_python
        llm = _llm(server, concurrency=4)
        prompts = [[{"role": "user", "content": f"Question {i}?"}] for i in range(4)]
        await asyncio.gather(*(llm.json(p, Verdict, step="v") for p in prompts))
        assert llm.describe()["structured_output"] == "json_object_schema"
        assert {_form_of(r) for r in server.chat_requests} == {"json_schema", "json_object_schema"}


async def test_pinned_form_is_sent_without_negotiation() -> None:
    with FakeOpenAIServer() as server:
        server.push(Behaviour(content=GOOD))
        llm = _llm(server, structured_output="ollama_format")
        await llm.json(MSG, Verdict, step="v")
        sent = server.chat_requests[0]
        assert sent["format"]["properties"]["ok"]["type"] == "boolean" and "response_format" not in sent


def test_structured_fields_and_refusal_detection() -> None:
    schema = Verdict.model_json_schema()
    assert structured_fields("json_schema", "V", schema)["response_format"]["json_schema"]["schema"] == schema
    assert structured_fields("json_object_schema", "V", schema) == {
        "response_format": {"type": "json_object", "schema": schema}}
    assert structured_fields("json_object", "V", schema) == {"response_format": {"type": "json_object"}}
    assert structured_fields("none", "V", schema) == {}
    assert is_refusal(500, "Input should be 'text' or 'json_object' (response_format)")
    assert not is_refusal(500, "CUDA out of memory")
    assert not is_refusal(503, "response_format")  # 503 is an outage whatever it says
    assert not is_refusal(401, "bad key for response_format")


async def test_completion_caps_follow_the_kind_and_stops_are_sent() -> None:
    with FakeOpenAIServer() as server:
        llm = _llm(server, max_tokens={"answer": 77, "action": 33})
        await llm.text(MSG, step="a", kind="answer")
        await llm.text([{"role": "user", "content": "step"}], step="s", kind="action", stop=["\nObservation"])
        await llm.text([{"role": "user", "content": "q"}], step="q", kind="query")
        first, second, third = server.chat_requests
        assert first["max_tokens"] == 77 and "stop" not in first
        assert second["max_tokens"] == 33 and second["stop"] == ["\nObservation"]
        assert third["max_tokens"] == CompletionCaps().query
    assert LLMSettings(max_tokens=64).max_tokens.extraction == 64  # one number caps every kind


async def test_cut_off_reply_gets_a_repair_that_says_so() -> None:
    truncated = json.dumps({"choices": [{"message": {"content": '{"ok": true, "reas'}, "finish_reason": "length"}]})
    with FakeOpenAIServer() as server:
        server.push(Behaviour(body=truncated), Behaviour(content=GOOD))
        llm = _llm(server, structured_output="none")
        assert (await llm.json(MSG, Verdict, step="v")).ok
        assert "cut off at the limit" in server.chat_requests[1]["messages"][-1]["content"]
        assert llm.meter.repairs == 1


async def test_answers_stream_token_by_token_to_listeners(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "i.db")
    pieces: list[tuple[str, str]] = []
    with FakeOpenAIServer() as server:
        server.default = Behaviour(content="Ada Lovelace trained her [1].")
        llm = _llm(server, store)
        with listen_tokens(lambda step, text: pieces.append((step, text))):
            reply = await llm.text(MSG, step="answer.x", kind="answer")
            await llm.text([{"role": "user", "content": "kw"}], step="kw", kind="query")  # not an answer kind
        assert reply == "Ada Lovelace trained her [1]."
        assert server.chat_requests[0]["stream"] is True and "stream" not in server.chat_requests[1]
        assert len(pieces) > 3 and "".join(t for _, t in pieces) == reply and {s for s, _ in pieces} == {"answer.x"}
        pieces.clear()
        with listen_tokens(lambda step, text: pieces.append((step, text))):
            assert await llm.text(MSG, step="answer.x", kind="answer") == reply  # from the cache: one piece
        assert pieces == [("answer.x", reply)]
    store.close()


async def test_server_that_ignores_stream_still_delivers_the_answer() -> None:
    pieces: list[str] = []
    with FakeOpenAIServer() as server:
        server.streams = False
        server.default = Behaviour(content="Ada")
        with listen_tokens(lambda step, text: pieces.append(text)):
            assert await _llm(server).text(MSG, step="a") == "Ada"
    assert pieces == ["Ada"]


async def test_oversized_reply_is_refused_without_reading_it_whole() -> None:
    with FakeOpenAIServer() as server:
        server.default = Behaviour(content="x" * 300_000)
        llm = _llm(server, max_reply_bytes=100_000, max_retries=1)
        with pytest.raises(LLMUnavailableError, match="larger than 100000 bytes"):
            await llm.text(MSG, step="a")


async def test_error_body_echoing_the_key_is_redacted() -> None:
    with FakeOpenAIServer() as server:
        echo = '{"error": "no model m for key sk-canary-7781 at bearer sk-canary-7781"}'
        server.push(Behaviour(status=404, body=echo))
        llm = LLM.from_settings(LLMSettings(base_url=server.url, model="m", api_key="sk-canary-7781"))
        with pytest.raises(LLMError) as caught:
            await llm.text(MSG, step="a")
    assert "sk-canary-7781" not in str(caught.value) and "***" in str(caught.value)


def test_retry_after_in_any_shape() -> None:
    assert retry_after_seconds("2.5") == 2.5
    assert retry_after_seconds("soon") is None  # unreadable: the client's own backoff applies
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past
    assert retry_after_seconds(None) is None


async def test_unusable_reply_after_repairs_is_counted() -> None:
    with FakeOpenAIServer() as server:
        server.default = Behaviour(content="I cannot answer in JSON, sorry.")
        llm = _llm(server, structured_output="none", max_repairs=1)
        with pytest.raises(StructuredOutputError):
            await llm.json(MSG, Verdict, step="v")
        assert llm.meter.parse_failures == 1 and llm.meter.repairs == 1 and len(server.chat_requests) == 2
