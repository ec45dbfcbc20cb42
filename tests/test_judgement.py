"""Yes/no judgements: the reason before the verdict in the schema, P(yes) read from the verdict token's
log-probabilities, the threshold deciding where they exist and the written verdict where they do not,
and the request fields that ask for them."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import pytest

from test_answer_replies import DictCache
from thinkgraph.config import LLMSettings
from thinkgraph.llm.backend import ChatRequest, ChatResult, LogprobsRejected, parse_completion, parse_logprobs
from thinkgraph.llm.judgement import (
    TOP_LOGPROBS,
    YesNoVerdict,
    decide,
    judged,
    verdict_probabilities,
    verdict_probability,
    yes_share,
)
from thinkgraph.llm.service import LLM, json_schema_of


def lp(p: float) -> float:
    return math.log(p)


# Qwen2.5's tokens for {"reason": "...", "verdict": "yes"} as llama-cpp-python returned them (the quote
# before the verdict is its own token, " \"").
TOKENS = [("{\"", [("{\"", lp(0.6))]), ("reason", [("reason", lp(0.99))]), ("\":", [("\":", lp(1.0))]),
          (" \"", [(" \"", lp(1.0))]), ("Paris", [("Paris", lp(0.9))]), (".\",", [(".\",", lp(0.9))]),
          (" \"", [(" \"", lp(1.0))]), ("ver", [("ver", lp(1.0))]), ("dict", [("dict", lp(1.0))]),
          ("\":", [("\":", lp(1.0))]), (" \"", [(" \"", lp(1.0))]),
          ("yes", [("yes", lp(0.6)), ("no", lp(0.3)), ("Yes", lp(0.05)), ("maybe", lp(0.05))]),
          ("\"}", [("\"}", lp(1.0))])]


def test_the_reason_comes_before_the_verdict_and_both_are_required() -> None:
    schema = json_schema_of(YesNoVerdict)
    assert list(schema["properties"]) == ["reason", "verdict"]
    # llama-cpp-python's grammar writes required properties first: an optional reason would follow the verdict
    assert schema["required"] == ["reason", "verdict"]
    assert schema["properties"]["verdict"]["enum"] == ["yes", "no"]


def test_p_yes_is_the_share_of_yes_spellings_at_the_verdict_token() -> None:
    p = verdict_probability(TOKENS, "verdict")
    assert p == pytest.approx((0.6 + 0.05) / (0.6 + 0.05 + 0.3))
    assert verdict_probability(TOKENS, "grounded") is None  # no such field
    assert verdict_probabilities(TOKENS, ["verdict", "grounded"]) == {"verdict": pytest.approx(p)}
    assert yes_share([("maybe", 0.0)]) is None
    # the quote and the verdict in one token, and a verdict split after its first letter
    merged = [("{\"verdict\": ", []), ("\"no", [("\"no", lp(0.8)), ("\"y", lp(0.2))]), ("\"}", [])]
    assert verdict_probability(merged, "verdict") == pytest.approx(0.2)


def test_the_threshold_decides_where_p_yes_is_known_and_the_written_verdict_where_it_is_not() -> None:
    assert decide(True, 0.3, 0.5).passed is False  # written yes, but P(yes) below the threshold
    assert decide(False, 0.7, 0.5).passed is True
    assert decide(False, 0.7, 0.8).passed is False
    assert decide(True, None, 0.9).passed is True  # no log-probabilities: the verdict as written
    judgement = judged(YesNoVerdict(reason="r", verdict="no"), {"verdict": 0.55}, "verdict", 0.5, "r")
    assert judgement.passed and judgement.trace() == {"verdict": "yes", "written": "no", "p_yes": 0.55,
                                                      "threshold": 0.5, "reason": "r"}


def test_logprobs_are_read_from_an_openai_body_and_absent_ones_are_no_error() -> None:
    body = {"choices": [{"message": {"content": "{}"}, "finish_reason": "stop", "logprobs": {"content": [
        {"token": "yes", "logprob": -0.1, "top_logprobs": [{"token": "no", "logprob": -2.5}]}]}}]}
    result = parse_completion(json.dumps(body).encode())
    assert result.token_logprobs == [("yes", [("no", -2.5), ("yes", -0.1)])]
    assert parse_logprobs(None) == [] and parse_logprobs({"content": "junk"}) == []
    assert parse_logprobs({"content": [{"no_token": 1}]}) == []


@dataclass
class LogprobBackend:
    """Replies with a verdict and, when asked for them, the tokens' log-probabilities."""

    reply: str
    tokens: list[tuple[str, list[tuple[str, float]]]]
    requests: list[ChatRequest] = field(default_factory=list)

    async def chat(self, request: ChatRequest, on_delta: object = None) -> ChatResult:
        self.requests.append(request)
        return ChatResult(text=self.reply, token_logprobs=self.tokens if request.top_logprobs else [])


REPLY = '{"reason": "Paris.", "verdict": "yes"}'


@pytest.mark.asyncio
async def test_judge_asks_for_logprobs_and_caches_the_verdict_with_them() -> None:
    backend = LogprobBackend(REPLY, TOKENS)
    cache = DictCache()
    llm = LLM(backend, settings=LLMSettings(model="m"), cache=cache)
    messages = [{"role": "user", "content": "Is it? Question: q"}]
    verdict, p = await llm.judge(messages, YesNoVerdict, keys=("verdict",), step="s")
    assert verdict.verdict == "yes" and p["verdict"] == pytest.approx(0.65 / 0.95)
    body = backend.requests[0].payload()
    assert body["logprobs"] is True and body["top_logprobs"] == TOP_LOGPROBS
    again, p_again = await llm.judge(messages, YesNoVerdict, keys=("verdict",), step="s")
    assert len(backend.requests) == 1 and again == verdict and p_again == p  # from the cache, with P(yes)
    # json() of the same prompt is another call (another key: no log-probabilities asked)
    await llm.json(messages, YesNoVerdict, step="s")
    assert len(backend.requests) == 2 and "logprobs" not in backend.requests[1].payload()


@pytest.mark.asyncio
async def test_without_logprobs_the_request_does_not_ask_and_no_probability_is_given() -> None:
    backend = LogprobBackend(REPLY, TOKENS)
    llm = LLM(backend, settings=LLMSettings(model="m", logprobs=False))
    verdict, p = await llm.judge([{"role": "user", "content": "q"}], YesNoVerdict, keys=("verdict",), step="s")
    assert verdict.verdict == "yes" and p == {} and "logprobs" not in backend.requests[0].payload()


def test_the_prompt_tokens_a_server_evaluated_are_read_from_its_timings() -> None:
    """llama.cpp's server reports what it read after reusing the previous prompt's prefix (prompt_n);
    a server without timings reports nothing (0)."""
    body = {"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": 900},
            "timings": {"prompt_n": 120, "cache_n": 780}}
    assert parse_completion(json.dumps(body).encode()).prompt_tokens_read == 120
    del body["timings"]
    assert parse_completion(json.dumps(body).encode()).prompt_tokens_read == 0


@dataclass
class RefusingBackend:
    """A server that answers HTTP 400 to any request asking for log-probabilities."""

    requests: list[ChatRequest] = field(default_factory=list)

    async def chat(self, request: ChatRequest, on_delta: object = None) -> ChatResult:
        self.requests.append(request)
        if request.top_logprobs:
            raise LogprobsRejected('LLM endpoint http://x/v1 returned HTTP 400: {"error": "logprobs is not supported"}')
        return ChatResult(text=REPLY)


@pytest.mark.asyncio
async def test_a_server_that_refuses_logprobs_is_asked_again_without_them_and_not_again_after() -> None:
    backend = RefusingBackend()
    llm = LLM(backend, settings=LLMSettings(model="m"))
    verdict, p = await llm.judge([{"role": "user", "content": "a"}], YesNoVerdict, keys=("verdict",), step="s")
    assert verdict.verdict == "yes" and p == {}
    assert [r.top_logprobs for r in backend.requests] == [TOP_LOGPROBS, None]
    await llm.judge([{"role": "user", "content": "b"}], YesNoVerdict, keys=("verdict",), step="s")
    assert backend.requests[-1].top_logprobs is None and len(backend.requests) == 3


def test_logprobs_can_be_turned_off_from_the_environment() -> None:
    from thinkgraph.config import load_settings

    assert load_settings(env={"THINKGRAPH_LLM_LOGPROBS": "false"}).llm.logprobs is False
    assert load_settings(env={}).llm.logprobs is True
