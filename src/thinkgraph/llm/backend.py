"""Transport to an OpenAI-compatible chat completions endpoint, with retries and backoff."""

from __future__ import annotations

import asyncio
import email.utils
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from thinkgraph.errors import LLMError, LLMUnavailableError

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 30.0


@dataclass(frozen=True, slots=True)
class ChatRequest:
    messages: tuple[dict[str, str], ...]
    model: str
    temperature: float = 0.0
    max_tokens: int = 1024
    response_format: dict[str, Any] | None = None
    seed: int | None = None  # OpenAI-compatible servers that sample honour it (vLLM, llama.cpp, OpenAI)

    def payload(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(self.messages),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.response_format is not None:
            body["response_format"] = self.response_format
        if self.seed is not None:
            body["seed"] = self.seed
        return body


@dataclass(slots=True)
class ChatResult:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


class ResponseFormatRejected(LLMError):
    """The server refused the request's response_format (the caller degrades and asks again)."""


class ChatBackend(Protocol):
    async def chat(self, request: ChatRequest) -> ChatResult: ...


def _retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return None if parsed is None else max(0.0, parsed.timestamp() - time.time())


class _Malformed(Exception):
    pass


def _parse_body(response: httpx.Response) -> ChatResult:
    try:
        body = response.json()
        message = body["choices"][0]["message"]
        text = message.get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise _Malformed(f"malformed response body ({type(exc).__name__})") from exc
    if not isinstance(text, str):
        raise _Malformed("response content is not text")
    usage = body.get("usage") or {}
    return ChatResult(text=text, prompt_tokens=int(usage.get("prompt_tokens") or 0),
                      completion_tokens=int(usage.get("completion_tokens") or 0))


class OpenAICompatibleBackend:
    """POST {base_url}/chat/completions. Retries timeouts, transport errors, 429, 5xx and malformed
    bodies with exponential backoff (honouring Retry-After); other HTTP errors fail at once."""

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout_s: float = 120.0,
                 max_retries: int = 4, backoff_s: float = 1.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self._clients: dict[int, httpx.AsyncClient] = {}

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAICompatibleBackend(base_url={self.base_url!r})"

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

    async def chat(self, request: ChatRequest) -> ChatResult:
        url = f"{self.base_url}/chat/completions"
        attempt = 0
        while True:
            started = time.perf_counter()
            retry_after: float | None = None
            try:
                response = await self._client().post(url, json=request.payload())
            except httpx.TimeoutException:
                problem = "timed out"
            except httpx.TransportError as exc:
                problem = f"cannot connect ({type(exc).__name__})"
            else:
                code = response.status_code
                if code == 200:
                    try:
                        result = _parse_body(response)
                        result.seconds = time.perf_counter() - started
                        return result
                    except _Malformed as exc:
                        problem = str(exc)
                elif code == 429 or code >= 500:
                    problem = f"HTTP {code}"
                    retry_after = _retry_after_seconds(response.headers.get("retry-after"))
                elif code in (400, 422) and request.response_format is not None:
                    raise ResponseFormatRejected(f"HTTP {code} for response_format")
                elif code in (401, 403):
                    raise LLMError(f"LLM endpoint {self.base_url} refused the credentials (HTTP {code})")
                else:
                    raise LLMError(f"LLM endpoint {self.base_url} returned HTTP {code}: {response.text[:200]}")
            attempt += 1
            if attempt > self.max_retries:
                raise LLMUnavailableError(
                    f"LLM endpoint {self.base_url} failed after {attempt} attempts: {problem}")
            delay = retry_after if retry_after is not None else self.backoff_s * 2 ** (attempt - 1)
            delay = min(delay, MAX_BACKOFF_S)
            log.warning("LLM call %s; retry %d/%d in %.1fs", problem, attempt, self.max_retries, delay)
            await asyncio.sleep(delay)
