"""The LLM object methods and extractors use: cached, budgeted, accounted, structured calls."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from thinkgraph.config import CallKind, LLMSettings
from thinkgraph.errors import ConfigError, StructuredOutputError
from thinkgraph.llm.accounting import UsageMeter, token_listeners
from thinkgraph.llm.backend import (
    ChatBackend,
    ChatRequest,
    ChatResult,
    LogprobsRejected,
    OpenAICompatibleBackend,
    ResponseFormatRejected,
)
from thinkgraph.llm.context import Message as Message  # (re-exported: the methods build messages)
from thinkgraph.llm.context import fit_messages, prompt_tokens
from thinkgraph.llm.dialects import (
    NEGOTIATION_ORDER,
    DialectMemory,
    StructuredForm,
    next_form,
    recall_form,
    remember_form,
    structured_fields,
)
from thinkgraph.llm.judgement import TOP_LOGPROBS, verdict_probabilities
from thinkgraph.llm.structured import JSONExtractionError, extract_json, json_values, strip_reasoning
from thinkgraph.models import Cost
from thinkgraph.tokens import TokenCounter

log = logging.getLogger(__name__)

# Bump when prompts' wire format or parsing changes in a way that makes old cache entries wrong.
CACHE_VERSION = "2"

T = TypeVar("T", bound=BaseModel)


@functools.cache
def json_schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """A reply model's JSON schema, made once per model (pydantic rebuilds it on every call: 1.3 ms,
    twice per structured call, on the event loop). Read-only: it goes into request bodies and keys."""
    return model.model_json_schema()
MAX_CHARS_PER_TOKEN = 16  # a reply longer than max_tokens * this ignored its cap: it is cut there
STREAMED_KINDS: frozenset[CallKind] = frozenset({"answer", "report"})  # what a token listener is shown

REPAIR_PROMPT = (
    "Your previous reply could not be used: {error}.\n"
    "Reply again with only one JSON value that follows this JSON schema, no prose and no code fence:\n"
    "{schema}"
)


@dataclass(frozen=True, slots=True)
class TextReply:
    """A free-text reply and whether the completion cap cut it (the server's finish_reason "length")."""

    text: str
    truncated: bool = False


def _cached_reply(value: Any) -> TextReply | None:
    """A cached free-text reply: a string, or the text with its finish reason when the cap cut it."""
    if isinstance(value, str):
        return TextReply(value)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return TextReply(value["text"], truncated=value.get("finish_reason") == "length")
    return None


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
        memory: DialectMemory | None = None,
    ) -> None:
        self.backend = backend
        self.settings = settings or LLMSettings(model=model)
        self.model = model if settings is None else settings.model
        self.cache = cache
        self.memory = memory  # where the negotiated structured-output form is remembered
        self.meter = meter or UsageMeter(self.settings.budget_calls, self.settings.budget_tokens)
        self.counter = counter or TokenCounter()
        self._form: StructuredForm | None = None  # decided at the first structured call
        self._form_settled = False
        self._semaphores: dict[int, asyncio.Semaphore] = {}
        self._logprobs_refused = False  # the server refused log-probabilities: verdicts as written from then on

    @classmethod
    def from_settings(cls, settings: LLMSettings, *, cache: ResponseCache | None = None,
                      meter: UsageMeter | None = None, counter: TokenCounter | None = None,
                      memory: DialectMemory | None = None) -> LLM:
        if not settings.configured:
            raise ConfigError("no LLM endpoint configured (set THINKGRAPH_LLM_BASE_URL or [llm] base_url)")
        key = settings.api_key.get_secret_value() if settings.api_key else None
        backend = OpenAICompatibleBackend(str(settings.base_url), api_key=key, timeout_s=settings.timeout_s,
                                          max_retries=settings.max_retries, backoff_s=settings.backoff_s,
                                          max_reply_bytes=settings.max_reply_bytes)
        return cls(backend, settings=settings, cache=cache, meter=meter, counter=counter, memory=memory)

    @property
    def endpoint(self) -> str:
        return str(getattr(self.backend, "endpoint", type(self.backend).__name__))

    def describe(self) -> dict[str, Any]:
        """The model, endpoint and negotiated structured-output form, for traces and `inspect`."""
        return {"model": self.model, "endpoint": self.endpoint,
                "structured_output": self._form or "not negotiated yet",
                "repairs": self.meter.repairs, "parse_failures": self.meter.parse_failures,
                "format_refusals": self.meter.format_refusals, "truncations": self.meter.truncations,
                "cut_replies": self.meter.cut_replies}

    def _semaphore(self) -> asyncio.Semaphore:
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._semaphores:
            self._semaphores = {loop_id: asyncio.Semaphore(self.settings.concurrency)}
        return self._semaphores[loop_id]

    # public API ---------------------------------------------------------------
    async def text(self, messages: list[Message], *, step: str, kind: CallKind = "answer",
                   stop: Sequence[str] = (), max_tokens: int | None = None,
                   usable: Callable[[str], bool] | None = None) -> str:
        """A free-text reply (reasoning blocks removed): ``reply`` without whether the cap cut it."""
        return (await self.reply(messages, step=step, kind=kind, stop=stop, max_tokens=max_tokens,
                                 usable=usable)).text

    async def reply(self, messages: list[Message], *, step: str, kind: CallKind = "answer",
                    stop: Sequence[str] = (), max_tokens: int | None = None,
                    usable: Callable[[str], bool] | None = None) -> TextReply:
        """A free-text reply (reasoning blocks removed), capped at the kind's completion tokens and cut
        before any of ``stop``, with whether the completion cap cut it (``finish_reason`` "length", kept
        in the cache with the text). Empty replies are returned as "" and never cached; nor is a reply
        that ``usable`` refuses (a summary that repeats its prompt), so that a later run asks again
        instead of reading the same failure back, and a cached one it refuses is asked again."""
        max_tokens = max_tokens or self.settings.max_tokens.for_kind(kind)
        params: dict[str, Any] = {"max_tokens": max_tokens, "t": self.settings.temperature, "seed": self.settings.seed}
        if stop:
            params["stop"] = list(stop)
        key = cache_key(self.model, messages, params)
        listeners = token_listeners() if kind in STREAMED_KINDS else ()
        cached = _cached_reply(self._cached(key, step))
        if cached is not None and (usable is None or usable(cached.text)):
            for listener in listeners:
                listener(step, cached.text)
            return cached

        def forward(piece: str) -> None:
            for listener in listeners:
                listener(step, piece)

        result = await self._call(messages, step=step, max_tokens=max_tokens, stop=tuple(stop),
                                  on_delta=forward if listeners else None)
        reply = TextReply(strip_reasoning(result.text), truncated=result.finish_reason == "length")
        if reply.text and self.cache is not None and (usable is None or usable(reply.text)):
            self.cache.cache_put(key, {"text": reply.text, "finish_reason": "length"} if reply.truncated
                                 else reply.text)
        return reply

    async def json(self, messages: list[Message], schema: type[T], *, step: str, kind: CallKind = "verdict",
                   max_tokens: int | None = None) -> T:
        """A reply validated against ``schema``; re-asks up to ``max_repairs`` times, then raises
        StructuredOutputError (counted in ``meter.parse_failures``). Only valid replies are cached."""
        value, _ = await self._structured(messages, schema, step=step, kind=kind, max_tokens=max_tokens, keys=())
        return value

    async def judge(self, messages: list[Message], schema: type[T], *, keys: Sequence[str], step: str,
                    kind: CallKind = "verdict", max_tokens: int | None = None) -> tuple[T, dict[str, float]]:
        """A structured verdict (as ``json``) with P(yes) of each of its "yes"/"no" fields ``keys``, read
        from the verdict tokens' log-probabilities (llm/judgement.py) when the server returns them
        (``[llm] logprobs``); a field without them is absent from the probabilities. Cached with them."""
        asks = self.settings.logprobs and not self._logprobs_refused
        return await self._structured(messages, schema, step=step, kind=kind, max_tokens=max_tokens,
                                      keys=tuple(keys) if asks else ())

    async def _structured(self, messages: list[Message], schema: type[T], *, step: str, kind: CallKind,
                          max_tokens: int | None, keys: tuple[str, ...]) -> tuple[T, dict[str, float]]:
        max_tokens = max_tokens or self.settings.max_tokens.for_kind(kind)
        schema_json = json_schema_of(schema)
        params: dict[str, Any] = {"max_tokens": max_tokens, "t": self.settings.temperature, "schema": schema_json,
                                  "seed": self.settings.seed}
        if keys:
            params["logprobs"] = list(keys)
        key = cache_key(self.model, messages, params)
        cached = self._cached(key, step)
        if cached is not None:
            value_part, probabilities = (cached.get("value"), cached.get("p_yes", {})) if keys and \
                isinstance(cached, dict) and "value" in cached else (cached, {})
            try:
                return schema.model_validate(value_part), {str(k): float(v) for k, v in probabilities.items()}
            except (ValidationError, AttributeError, TypeError, ValueError):
                log.warning("ignoring a cache entry that no longer validates for %s", step)
        conversation = list(messages)
        error = "unknown"
        for attempt in range(1 + self.settings.max_repairs):
            if attempt:
                self.meter.repairs += 1
            result = await self._call(conversation, step=step, max_tokens=max_tokens, schema=schema,
                                      top_logprobs=TOP_LOGPROBS if keys else None)
            try:
                value = _first_valid(schema, result.text)
            except (JSONExtractionError, ValidationError) as exc:
                error = _describe(exc, result, max_tokens)
                conversation = [*messages, {"role": "assistant", "content": result.text[:4000]},
                                {"role": "user", "content": REPAIR_PROMPT.format(
                                    error=error, schema=json.dumps(schema_json))}]
                continue
            probabilities = verdict_probabilities(result.token_logprobs, keys) if keys else {}
            if self.cache is not None:
                dumped = value.model_dump(mode="json", by_alias=True)
                self.cache.cache_put(key, {"value": dumped, "p_yes": probabilities} if keys else dumped)
            return value, probabilities
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

    def _current_form(self) -> StructuredForm:
        if self._form is None:
            pinned = self.settings.structured_output
            if pinned != "auto":
                self._form, self._form_settled = pinned, True
            else:
                remembered = recall_form(self.memory, self.endpoint, self.model)
                self._form_settled = remembered is not None
                self._form = remembered or NEGOTIATION_ORDER[0]
        return self._form

    def _step_down(self, refused: StructuredForm) -> None:
        """The server refused ``refused``: use the next form (unless a concurrent call already did)."""
        self.meter.format_refusals += 1
        if self._form != refused:
            return
        following = next_form(refused)
        if following is None:
            raise StructuredOutputError("the endpoint refuses even unconstrained requests")
        log.info("endpoint %s refused structured output as %s; trying %s", self.endpoint, refused, following)
        self._form, self._form_settled = following, False

    def _settle(self, form: StructuredForm) -> None:
        if not self._form_settled and self._form == form:
            self._form_settled = True
            remember_form(self.memory, self.endpoint, self.model, form)

    async def _call(self, messages: list[Message], *, step: str, max_tokens: int, stop: tuple[str, ...] = (),
                    schema: type[BaseModel] | None = None, on_delta: Any = None,
                    top_logprobs: int | None = None) -> ChatResult:
        self.meter.check_budget()
        if self._logprobs_refused:  # refused once: never asked again, a repair of the same judgement included
            top_logprobs = None
        fitted, cut = fit_messages(messages, context_window=self.settings.context_window,
                                   max_tokens=max_tokens, counter=self.counter)
        if cut:
            self.meter.truncations += 1
        async with self._semaphore():
            while True:
                form = self._current_form() if schema is not None else None
                structured = structured_fields(form, schema.__name__, json_schema_of(schema)) \
                    if form is not None and schema is not None else {}
                request = ChatRequest(messages=tuple(fitted), model=self.model,
                                      temperature=self.settings.temperature, max_tokens=max_tokens,
                                      structured=structured, stop=stop, seed=self.settings.seed,
                                      top_logprobs=top_logprobs)
                started = time.perf_counter()
                try:
                    result = await self.backend.chat(request, on_delta) if on_delta else \
                        await self.backend.chat(request)
                except ResponseFormatRejected:
                    if form is None:  # only structured requests can be refused
                        raise
                    self._step_down(form)
                    continue
                except LogprobsRejected:
                    if top_logprobs is None:  # only a request asking for them can be refused them
                        raise
                    log.info("endpoint %s refused log-probabilities; verdicts are read as written", self.endpoint)
                    self._logprobs_refused, top_logprobs = True, None
                    continue
                if form is not None:
                    self._settle(form)
                break
        result.text = _well_formed(result.text)
        if len(result.text) > max_tokens * MAX_CHARS_PER_TOKEN:  # a server that ignored max_tokens
            result.text = result.text[: max_tokens * MAX_CHARS_PER_TOKEN]
            result.finish_reason = "length"
            self.meter.cut_replies += 1
        cost = Cost(calls=1,
                    prompt_tokens=result.prompt_tokens or prompt_tokens(fitted, self.counter),
                    completion_tokens=result.completion_tokens or self.counter.count(result.text),
                    seconds=result.seconds or (time.perf_counter() - started),
                    prompt_tokens_read=result.prompt_tokens_read)
        self.meter.record(step, cost)
        return result


def _first_valid(schema: type[T], text: str) -> T:
    """The first JSON value in the reply that validates against ``schema`` (a model may put bracketed
    prose or an example before its answer); the first value's error when none does."""
    first_error: ValidationError | None = None
    for value in json_values(text):
        try:
            return schema.model_validate(value)
        except ValidationError as exc:
            first_error = first_error or exc
    if first_error is not None:
        raise first_error
    return schema.model_validate(extract_json(text))  # raises JSONExtractionError saying why


def _well_formed(text: str) -> str:
    """Text that can be stored and shown: lone surrogates (invalid in UTF-8) and NUL characters replaced."""
    return text.encode("utf-8", errors="replace").decode("utf-8").replace("\x00", "\ufffd")


def _describe(exc: Exception, result: ChatResult, max_tokens: int) -> str:
    if result.finish_reason == "length":
        return f"the reply was cut off at the limit of {max_tokens} tokens; give a shorter reply"
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "value"
        return f"field {where}: {first['msg']}"
    return str(exc)
