"""The real HTTP client against a local server speaking the OpenAI-compatible API."""

from __future__ import annotations

import json
import logging
import time

import pytest
from pydantic import BaseModel

from support import Behaviour, FakeOpenAIServer
from thinkgraph.config import LLMSettings, load_settings
from thinkgraph.errors import LLMError, LLMUnavailableError
from thinkgraph.llm.backend import ChatRequest, LogprobsRejected, OpenAICompatibleBackend
from thinkgraph.llm.service import LLM


def _backend(server: FakeOpenAIServer, **kw: object) -> OpenAICompatibleBackend:
    opts = {"timeout_s": 2.0, "max_retries": 3, "backoff_s": 0.01} | kw
    return OpenAICompatibleBackend(server.url, api_key="sk-secret-123", **opts)


def _req(**kw: object) -> ChatRequest:
    return ChatRequest(messages=({"role": "user", "content": "hi"},), model="m", **kw)


async def test_success_reads_text_and_usage(fake_server: FakeOpenAIServer) -> None:
    fake_server.push(Behaviour(content="hello"))
    result = await _backend(fake_server).chat(_req())
    assert result.text == "hello" and result.prompt_tokens == 11 and result.completion_tokens == 3
    sent = fake_server.chat_requests[0]
    assert sent["model"] == "m" and sent["messages"][0]["content"] == "hi" and sent["temperature"] == 0.0
    assert fake_server.headers[0]["Authorization"] == "Bearer sk-secret-123"


async def test_retries_429_and_5xx_then_succeeds(fake_server: FakeOpenAIServer) -> None:
    fake_server.push(Behaviour(status=429, body="{}"), Behaviour(status=500, body="oops"),
                     Behaviour(status=503, body=""), Behaviour(content="finally"))
    assert (await _backend(fake_server).chat(_req())).text == "finally"
    assert len(fake_server.chat_requests) == 4


async def test_honours_retry_after(fake_server: FakeOpenAIServer) -> None:
    fake_server.push(Behaviour(status=429, body="{}", headers={"Retry-After": "0.3"}), Behaviour(content="ok"))
    started = time.perf_counter()
    await _backend(fake_server, backoff_s=0.0).chat(_req())
    assert time.perf_counter() - started >= 0.3


async def test_gives_up_after_retries_with_one_line_error(fake_server: FakeOpenAIServer) -> None:
    fake_server.push(*[Behaviour(status=500, body="x")] * 4)
    with pytest.raises(LLMUnavailableError, match="failed after 4 attempts: HTTP 500"):
        await _backend(fake_server).chat(_req())


async def test_timeout_is_retried(fake_server: FakeOpenAIServer) -> None:
    fake_server.push(Behaviour(content="slow", delay_s=0.6), Behaviour(content="fast"))
    result = await _backend(fake_server, timeout_s=0.3).chat(_req())
    assert result.text == "fast"


async def test_malformed_bodies_are_retried(fake_server: FakeOpenAIServer) -> None:
    fake_server.push(Behaviour(body="not json"), Behaviour(body='{"choices": []}'),
                     Behaviour(body='{"choices": [{"message": {"content": 5}}]}'), Behaviour(content="good"))
    assert (await _backend(fake_server).chat(_req())).text == "good"


async def test_client_errors_fail_at_once(fake_server: FakeOpenAIServer) -> None:
    fake_server.push(Behaviour(status=401, body="{}"))
    with pytest.raises(LLMError, match="refused the credentials") as info:
        await _backend(fake_server).chat(_req())
    assert "sk-secret" not in str(info.value)
    fake_server.push(Behaviour(status=404, body="no such model"))
    with pytest.raises(LLMError, match="HTTP 404"):
        await _backend(fake_server).chat(_req())
    assert len(fake_server.chat_requests) == 2


async def test_unreachable_endpoint() -> None:
    backend = OpenAICompatibleBackend("http://127.0.0.1:9/v1", max_retries=1, backoff_s=0.01, timeout_s=1)
    with pytest.raises(LLMUnavailableError, match="cannot connect"):
        await backend.chat(_req())


class Pair(BaseModel):
    a: int
    b: str


async def test_structured_output_degrades_when_server_rejects_format(fake_server: FakeOpenAIServer) -> None:
    fake_server.push(Behaviour(status=400, body='{"error": "response_format json_schema unsupported"}'),
                     Behaviour(status=400, body='{"error": "json_object unsupported"}'),
                     Behaviour(content='```json\n{"a": 1, "b": "x",}\n```'))
    llm = LLM(_backend(fake_server), settings=LLMSettings(model="m"))
    assert await llm.json([{"role": "user", "content": "q"}], Pair, step="t") == Pair(a=1, b="x")
    formats = [r.get("response_format", {}).get("type") for r in fake_server.chat_requests]
    assert formats == ["json_schema", "json_object", None]
    # the downgrade is remembered for later calls
    fake_server.push(Behaviour(content='{"a": 2, "b": "y"}'))
    await llm.json([{"role": "user", "content": "q2"}], Pair, step="t")
    assert "response_format" not in fake_server.chat_requests[-1]


async def test_from_settings_reads_key_from_environment_only(fake_server: FakeOpenAIServer,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    settings = load_settings(env={"THINKGRAPH_LLM_BASE_URL": fake_server.url, "THINKGRAPH_LLM_MODEL": "qwen",
                                  "THINKGRAPH_LLM_API_KEY": "sk-env-456"})
    assert "sk-env-456" not in repr(settings) and "sk-env-456" not in json.dumps(settings.model_dump(mode="json"))
    llm = LLM.from_settings(settings.llm)
    assert "sk-env-456" not in repr(llm.backend)
    fake_server.push(Behaviour(status=500, body="x"), Behaviour(content="ok"))
    with caplog.at_level(logging.DEBUG):
        assert await llm.text([{"role": "user", "content": "hello"}], step="s") == "ok"
    assert fake_server.headers[-1]["Authorization"] == "Bearer sk-env-456"
    assert fake_server.chat_requests[-1]["model"] == "qwen"
    assert "sk-env-456" not in caplog.text


async def test_a_server_without_logprobs_is_asked_again_without_them_not_retried(
        fake_server: FakeOpenAIServer) -> None:
    """llama-cpp-python started with ``--logits_all false`` (scripts/local_model.sh's default) answers a
    request for log-probabilities with a 500 naming them: that is a refusal of the fields, said at once,
    not an outage retried until it fails; the verdict is then read as written."""
    from thinkgraph.llm.judgement import YesNoVerdict

    refusal = ('{"error": {"message": "logprobs is not supported for models created with logits_all=False", '
               '"type": "internal_server_error"}}')
    fake_server.push(Behaviour(status=500, body=refusal),
                     Behaviour(content='{"reason": "The passage says so.", "verdict": "yes"}'))
    llm = LLM(_backend(fake_server), settings=LLMSettings(model="m"))
    verdict, p = await llm.judge([{"role": "user", "content": "q"}], YesNoVerdict, keys=("verdict",), step="s")
    assert verdict.verdict == "yes" and p == {}
    assert [("logprobs" in r, "top_logprobs" in r) for r in fake_server.chat_requests] == [(True, True),
                                                                                         (False, False)]
    # once refused, a judgement's repair attempt does not ask for them again (one refusal a run)
    fake_server.push(Behaviour(content="yes, it does"),
                     Behaviour(content='{"reason": "It says so.", "verdict": "no"}'))
    verdict, _ = await llm.judge([{"role": "user", "content": "q2"}], YesNoVerdict, keys=("verdict",), step="s")
    assert verdict.verdict == "no" and len(fake_server.chat_requests) == 4
    assert not any("logprobs" in r for r in fake_server.chat_requests[2:])
    fresh = LLM(_backend(fake_server), settings=LLMSettings(model="m"))
    fake_server.push(Behaviour(status=500, body=refusal), Behaviour(content="no JSON here"),
                     Behaviour(content='{"reason": "r", "verdict": "yes"}'))
    await fresh.judge([{"role": "user", "content": "q3"}], YesNoVerdict, keys=("verdict",), step="s")
    assert ["logprobs" in r for r in fake_server.chat_requests[4:]] == [True, False, False]
    # a structured request refused for its log-probabilities in words that name a format too is refused them,
    # not its structured-output form
    fake_server.push(Behaviour(status=500, body='{"error": "logprobs is not supported with this response format"}'))
    with pytest.raises(LogprobsRejected):
        await _backend(fake_server).chat(_req(top_logprobs=5, structured={"response_format": {"type": "json_object"}}))
    # a refusal that does not name them stays the request's error, said once
    fake_server.push(Behaviour(status=400, body='{"error": "context too long"}'))
    with pytest.raises(LLMError, match="context too long") as refused:
        await _backend(fake_server).chat(_req(top_logprobs=5))
    assert not isinstance(refused.value, LogprobsRejected)
    # an outage that is not about them is still retried (and fails when it lasts)
    fake_server.push(*[Behaviour(status=500, body="out of memory")] * 4)
    with pytest.raises(LLMUnavailableError, match="failed after 4 attempts: HTTP 500"):
        await _backend(fake_server).chat(_req(top_logprobs=5))
