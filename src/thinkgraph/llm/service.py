"""The LLM object methods and extractors use: cached, budgeted, accounted, structured calls."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from typing import Any, Literal, Protocol, TypedDict, TypeVar

from pydantic import BaseModel, ValidationError

from thinkgraph.config import LLMSettings
from thinkgraph.errors import ConfigError, StructuredOutputError
from thinkgraph.llm.accounting import UsageMeter
from thinkgraph.llm.backend import ChatBackend, ChatRequest, OpenAICompatibleBackend, ResponseFormatRejected
from thinkgraph.llm.context import fit_messages, prompt_tokens
from thinkgraph.llm.structured import JSONExtractionError, extract_json, strip_reasoning
from thinkgraph.models import Cost
from thinkgraph.tokens import TokenCounter

log = logging.getLogger(__name__)

# Bump when prompts' wire format or parsing changes in a way that makes old cache entries wrong.
CACHE_VERSION = "1"

T = TypeVar("T", bound=BaseModel)
FormatLevel = Literal["json_schema", "json_object", "none"]
_LEVELS: tuple[FormatLevel, ...] = ("json_schema", "json_object", "none")

REPAIR_PROMPT = (
    "Your previous reply could not be used: {error}.\n"
    "Reply again with only one JSON value that follows this JSON schema, no prose and no code fence:\n"
    "{schema}"
)


class Message(TypedDict):
    role: str
    content: str


class ResponseCache(Protocol):
    def cache_get(self, key: str) -> Any | None: ...
    def cache_put(self, key: str, value: Any) -> None: ...


def cache_key(model: str, messages: list[Message], params: dict[str, Any]) -> str:
    blob = json.dumps({"v": CACHE_VERSION, "model": model, "messages": messages, "params": params},
                      sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class LLM:
    def __init__(
        self,
        backend: ChatBackend,
        *,
        model: str = "default",
        settings: LLMSettings | None = None,
        cache: ResponseCache | None = None,
        meter: UsageMeter | None = None,
        counter: TokenCounter | None = None,
        structured_output: FormatLevel = "json_schema",
    ) -> None:
        self.backend = backend
        self.settings = settings or LLMSettings(model=model)
        self.model = model if settings is None else settings.model
        self.cache = cache
        self.meter = meter or UsageMeter(self.settings.budget_calls, self.settings.budget_tokens)
        self.counter = counter or TokenCounter()
        self._format_level: FormatLevel = structured_output
        self._semaphores: dict[int, asyncio.Semaphore] = {}

    @classmethod
    def from_settings(cls, settings: LLMSettings, *, cache: ResponseCache | None = None,
                      meter: UsageMeter | None = None, counter: TokenCounter | None = None) -> LLM:
        if not settings.configured:
            raise ConfigError("no LLM endpoint configured (set THINKGRAPH_LLM_BASE_URL or [llm] base_url)")
        key = settings.api_key.get_secret_value() if settings.api_key else None
        backend = OpenAICompatibleBackend(str(settings.base_url), api_key=key, timeout_s=settings.timeout_s,
                                          max_retries=settings.max_retries, backoff_s=settings.backoff_s)
        return cls(backend, settings=settings, cache=cache, meter=meter, counter=counter)

    def _semaphore(self) -> asyncio.Semaphore:
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._semaphores:
            self._semaphores = {loop_id: asyncio.Semaphore(self.settings.concurrency)}
        return self._semaphores[loop_id]

    # public API ---------------------------------------------------------------
    async def text(self, messages: list[Message], *, step: str, max_tokens: int | None = None) -> str:
        max_tokens = max_tokens or self.settings.max_tokens
        key = cache_key(self.model, messages, {"max_tokens": max_tokens, "t": self.settings.temperature,
                                                   "seed": self.settings.seed})
        cached = self._cached(key, step)
        if isinstance(cached, str):
            return cached
        reply = strip_reasoning(await self._call(messages, step=step, max_tokens=max_tokens))
        if reply and self.cache is not None:
            self.cache.cache_put(key, reply)
        return reply

    async def json(self, messages: list[Message], schema: type[T], *, step: str,
                   max_tokens: int | None = None) -> T:
        """A reply validated against ``schema``; re-asks up to ``max_repairs`` times, then raises
        StructuredOutputError (counted in ``meter.parse_failures``). Only valid replies are cached."""
        max_tokens = max_tokens or self.settings.max_tokens
        schema_json = schema.model_json_schema()
        params = {"max_tokens": max_tokens, "t": self.settings.temperature, "schema": schema_json,
                  "seed": self.settings.seed}
        key = cache_key(self.model, messages, params)
        cached = self._cached(key, step)
        if cached is not None:
            try:
                return schema.model_validate(cached)
            except ValidationError:
                log.warning("ignoring a cache entry that no longer validates for %s", step)
        conversation = list(messages)
        error = "unknown"
        for _ in range(1 + self.settings.max_repairs):
            reply = await self._call(conversation, step=step, max_tokens=max_tokens, schema=schema)
            try:
                value = schema.model_validate(extract_json(reply))
            except (JSONExtractionError, ValidationError) as exc:
                error = _describe(exc)
                conversation = [*messages, {"role": "assistant", "content": reply[:4000]},
                                {"role": "user", "content": REPAIR_PROMPT.format(
                                    error=error, schema=json.dumps(schema_json))}]
                continue
            if self.cache is not None:
                self.cache.cache_put(key, value.model_dump(mode="json"))
            return value
        self.meter.parse_failures += 1
        raise StructuredOutputError(f"{step}: no valid structured reply after "
                                    f"{1 + self.settings.max_repairs} attempts ({error})")

    # internals ----------------------------------------------------------------
    def _cached(self, key: str, step: str) -> Any | None:
        if self.cache is None:
            return None
        value = self.cache.cache_get(key)
        if value is not None:
            self.meter.record(step, Cost(cached_calls=1))
        return value

    def _response_format(self, schema: type[BaseModel] | None) -> dict[str, Any] | None:
        if schema is None or self._format_level == "none":
            return None
        if self._format_level == "json_object":
            return {"type": "json_object"}
        return {"type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()}}

    async def _call(self, messages: list[Message], *, step: str, max_tokens: int,
                    schema: type[BaseModel] | None = None) -> str:
        self.meter.check_budget()
        fitted, cut = fit_messages(messages, context_window=self.settings.context_window,
                                   max_tokens=max_tokens, counter=self.counter)
        if cut:
            self.meter.truncations += 1
        async with self._semaphore():
            while True:
                request = ChatRequest(messages=tuple(fitted), model=self.model,
                                      temperature=self.settings.temperature, max_tokens=max_tokens,
                                      response_format=self._response_format(schema), seed=self.settings.seed)
                started = time.perf_counter()
                try:
                    result = await self.backend.chat(request)
                except ResponseFormatRejected:
                    level = _LEVELS.index(self._format_level)
                    if level + 1 >= len(_LEVELS):
                        raise
                    self._format_level = _LEVELS[level + 1]
                    log.info("endpoint rejected structured output; using %s", self._format_level)
                    continue
                break
        cost = Cost(calls=1,
                    prompt_tokens=result.prompt_tokens or prompt_tokens(fitted, self.counter),
                    completion_tokens=result.completion_tokens or self.counter.count(result.text),
                    seconds=result.seconds or (time.perf_counter() - started))
        self.meter.record(step, cost)
        return result.text


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "value"
        return f"field {where}: {first['msg']}"
    return str(exc)
