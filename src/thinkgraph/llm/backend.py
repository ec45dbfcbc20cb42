"""Transport to an OpenAI-compatible chat completions endpoint, with retries and backoff."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from thinkgraph.errors import LLMError, LLMUnavailableError
from thinkgraph.llm.dialects import is_refusal
from thinkgraph.redact import Redactor

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 30.0
DEFAULT_MAX_REPLY_BYTES = 1_000_000

DeltaSink = Callable[[str], None]  # receives each piece of a streamed completion


@dataclass(frozen=True, slots=True)
class ChatRequest:
    messages: tuple[dict[str, str], ...]
    model: str
    temperature: float = 0.0
    max_tokens: int = 1024
    # Body fields that ask for structured output in the server's dialect (see llm/dialects.py).
    structured: dict[str, Any] = field(default_factory=dict)
    stop: tuple[str, ...] = ()
    seed: int | None = None  # OpenAI-compatible servers that sample honour it (vLLM, llama.cpp, OpenAI)
    # Ask for each generated token's log-probability and its ``top_logprobs`` alternatives (a verdict's
    # P(yes), llm/judgement.py); servers that do not return them are read without.
    top_logprobs: int | None = None

    @property
    def response_format(self) -> dict[str, Any] | None:
        return self.structured.get("response_format")

    def payload(self, *, stream: bool = False) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(self.messages),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            **self.structured,
        }
        if self.stop:
            body["stop"] = list(self.stop)
        if self.seed is not None:
            body["seed"] = self.seed
        if self.top_logprobs is not None:
            body["logprobs"] = True
            body["top_logprobs"] = self.top_logprobs
        if stream:
            body["stream"] = True
        return body


@dataclass(slots=True)
class ChatResult:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    finish_reason: str | None = None  # "length" when the completion cap cut the reply
    extra: dict[str, Any] = field(default_factory=dict)
    prompt_tokens_read: int = 0  # what the server evaluated (llama.cpp timings.prompt_n); 0: not reported
    # The generated tokens with their log-probability and alternatives, when asked for and returned:
    # [(token, [(alternative, logprob), ...]), ...]
    token_logprobs: list[tuple[str, list[tuple[str, float]]]] = field(default_factory=list)


class ResponseFormatRejected(LLMError):
    """The server refused the request's structured-output fields (the caller steps down a dialect)."""


class LogprobsRejected(LLMError):
    """The server refused the request's log-probability fields (the caller asks again without them)."""


# Status codes a server answers a log-probability field it cannot serve with, the error naming them:
# 400/404/415/422 (validation), 500 (llama-cpp-python started with --logits_all false), 501.
LOGPROBS_REFUSAL_STATUS = frozenset({400, 404, 415, 422, 500, 501})


class ChatBackend(Protocol):
    async def chat(self, request: ChatRequest, on_delta: DeltaSink | None = None) -> ChatResult: ...


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds from a Retry-After header (a number or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, parsed.timestamp() - time.time())


class _Malformed(Exception):
    pass


def parse_completion(body: bytes) -> ChatResult:
    try:
        data = json.loads(body)
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise _Malformed(f"malformed response body ({type(exc).__name__})") from exc
    if not isinstance(text, str):
        raise _Malformed("response content is not text")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return ChatResult(text=text, prompt_tokens=_int(usage.get("prompt_tokens")),
                      completion_tokens=_int(usage.get("completion_tokens")),
                      finish_reason=choice.get("finish_reason") if isinstance(choice, dict) else None,
                      prompt_tokens_read=_int(timings.get("prompt_n")) if isinstance(timings := data.get("timings"),
                                                                                      dict) else 0,
                      token_logprobs=parse_logprobs(choice.get("logprobs") if isinstance(choice, dict) else None))


def parse_logprobs(value: object) -> list[tuple[str, list[tuple[str, float]]]]:
    """The OpenAI form ``{"content": [{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}]}``
    as (token, alternatives) pairs, the chosen token among its alternatives; [] when absent or malformed
    (a server without log-probabilities is read without them)."""
    content = value.get("content") if isinstance(value, dict) else None
    if not isinstance(content, list):
        return []
    out: list[tuple[str, list[tuple[str, float]]]] = []
    for item in content:
        if not isinstance(item, dict) or not isinstance(item.get("token"), str):
            return []
        tops = [(t["token"], float(t["logprob"])) for t in item.get("top_logprobs") or []
                if isinstance(t, dict) and isinstance(t.get("token"), str) and _number(t.get("logprob"))]
        if _number(item.get("logprob")) and all(tok != item["token"] for tok, _ in tops):
            tops.append((item["token"], float(item["logprob"])))
        out.append((item["token"], tops))
    return out


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def parse_stream_line(line: str) -> tuple[str, str | None] | None:
    """(delta text, finish reason) of one server-sent-events line; None for keep-alives and [DONE]."""
    if not line.startswith("data:"):
        return None
    data = line[5:].strip()
    if not data or data == "[DONE]":
        return None
    try:
        choice = json.loads(data)["choices"][0]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise _Malformed(f"malformed stream event ({type(exc).__name__})") from exc
    if not isinstance(choice, dict):
        raise _Malformed("malformed stream event (choice is not an object)")
    delta = choice.get("delta") or {}
    text = delta.get("content") if isinstance(delta, dict) else None
    return (text if isinstance(text, str) else ""), choice.get("finish_reason")


class OpenAICompatibleBackend:
    """POST {base_url}/chat/completions. Retries timeouts, transport errors, 429, 5xx and malformed
    bodies with exponential backoff (honouring Retry-After); a refused structured-output field raises
    ResponseFormatRejected at once (never retried as an outage); other HTTP errors fail at once.
    The API key never appears in messages: error bodies that echo it are redacted."""

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout_s: float = 120.0,
                 max_retries: int = 4, backoff_s: float = 1.0,
                 max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_reply_bytes = max_reply_bytes
        self._redact = Redactor([api_key] if api_key else [])
        self._clients: dict[int, httpx.AsyncClient] = {}

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAICompatibleBackend(base_url={self.base_url!r})"

    @property
    def endpoint(self) -> str:
        return self._redact(self.base_url)

    def _client(self) -> httpx.AsyncClient:
        # An AsyncClient belongs to one event loop; the sync API may run several loops in turn.
        loop_id = id(asyncio.get_running_loop())
        client = self._clients.get(loop_id)
        if client is None:
            headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
            client = httpx.AsyncClient(headers=headers, timeout=self.timeout_s)
            self._clients = {loop_id: client}
        return client

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()

    async def chat(self, request: ChatRequest, on_delta: DeltaSink | None = None) -> ChatResult:
        attempt = 0
        while True:
            started = time.perf_counter()
            retry_after: float | None = None
            try:
                result = await self._attempt(request, on_delta)
            except _Retryable as exc:
                problem, retry_after = str(exc), exc.retry_after
            else:
                result.seconds = time.perf_counter() - started
                result.text = self._redact(result.text)  # a server that echoes the request echoes the key
                return result
            attempt += 1
            if attempt > self.max_retries:
                raise LLMUnavailableError(
                    f"LLM endpoint {self.endpoint} failed after {attempt} attempts: {problem}")
            delay = retry_after if retry_after is not None else self.backoff_s * 2 ** (attempt - 1)
            delay = min(delay, MAX_BACKOFF_S)
            log.warning("LLM call %s; retry %d/%d in %.1fs", problem, attempt, self.max_retries, delay)
            await asyncio.sleep(delay)

    async def _attempt(self, request: ChatRequest, on_delta: DeltaSink | None) -> ChatResult:
        url = f"{self.base_url}/chat/completions"
        try:
            async with self._client().stream("POST", url, json=request.payload(stream=on_delta is not None)) as resp:
                if resp.status_code != 200:
                    body = (await self._read_capped(resp)).decode("utf-8", "replace")
                    self._raise_for_status(request, resp, body)
                if on_delta is not None and resp.headers.get("content-type", "").startswith("text/event-stream"):
                    return await self._read_stream(resp, on_delta)
                result = parse_completion(await self._read_capped(resp))
                if on_delta is not None and result.text:  # the server ignored stream=true: one piece
                    on_delta(result.text)
                return result
        except httpx.TimeoutException as exc:
            raise _Retryable("timed out") from exc
        except httpx.TransportError as exc:
            raise _Retryable(f"cannot connect ({type(exc).__name__})") from exc
        except _Malformed as exc:
            raise _Retryable(str(exc)) from exc

    async def _read_capped(self, resp: httpx.Response) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in resp.aiter_bytes():
            size += len(chunk)
            if size > self.max_reply_bytes:
                raise _Malformed(f"response body larger than {self.max_reply_bytes} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    async def _read_stream(self, resp: httpx.Response, on_delta: DeltaSink) -> ChatResult:
        pieces: list[str] = []
        size = 0
        finish: str | None = None
        async for line in resp.aiter_lines():
            size += len(line)
            if size > self.max_reply_bytes:
                raise _Malformed(f"streamed reply larger than {self.max_reply_bytes} bytes")
            event = parse_stream_line(line)
            if event is None:
                continue
            text, reason = event
            finish = reason or finish
            if text:
                pieces.append(text)
                on_delta(text)
        return ChatResult(text="".join(pieces), finish_reason=finish)

    def _raise_for_status(self, request: ChatRequest, resp: httpx.Response, body: str) -> None:
        code = resp.status_code
        if request.top_logprobs is not None and code in LOGPROBS_REFUSAL_STATUS and "logprob" in body[:4000].casefold():
            # A server that cannot give log-probabilities answers them with an error, not an outage:
            # llama-cpp-python started with --logits_all false says so in a 500 ("logprobs is not supported").
            # Said at once, with the server's words, the request is asked again without them (checked before
            # the structured-output refusal: such a body may name a format or schema too).
            detail = " ".join(self._redact(body).split())[:200]
            raise LogprobsRejected(f"LLM endpoint {self.endpoint} returned HTTP {code}: {detail}")
        if request.structured and is_refusal(code, body):
            raise ResponseFormatRejected(f"HTTP {code} for the structured-output fields")
        if code == 429 or code >= 500:
            raise _Retryable(f"HTTP {code}", retry_after_seconds(resp.headers.get("retry-after")))
        if code in (401, 403):
            raise LLMError(f"LLM endpoint {self.endpoint} refused the credentials (HTTP {code})")
        detail = " ".join(self._redact(body).split())[:200]
        raise LLMError(f"LLM endpoint {self.endpoint} returned HTTP {code}: {detail}")


class _Retryable(Exception):
    def __init__(self, problem: str, retry_after: float | None = None) -> None:
        super().__init__(problem)
        self.retry_after = retry_after
