"""LLMRuntime: the one entry point every service uses to call a model.

It tries the configured providers in order and falls back on any provider failure (transport,
HTTP, timeout, unusable or empty output). With an output model it asks for that JSON schema,
validates the answer, and re-asks the same provider once with the validation error before
falling back (unless the answer was cut at max_tokens: the same budget would cut it again).
Every attempt is recorded (one llm_calls row each) and logged as `llm.call`.

`complete` and `stream` are two ways of asking a provider through one walk
(eko/llm/provider_walk.py). A chain stage uses a `subset` of the runtime: its own choice of
providers, the same circuit breakers, call log and settings.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, Unpack, overload

import structlog
from pydantic import BaseModel

from eko.llm.breaker import BreakerSnapshot, CircuitBreaker
from eko.llm.call_log import AttemptLog, CallContext
from eko.llm.caller_format import CallerFormat
from eko.llm.prompt_budget import count_prompt_tokens, prompt_budget_tokens
from eko.llm.provider_walk import ProviderAsk, WholeAnswer, walk_providers
from eko.llm.streaming import BeginSink, DeltaSink, StreamedAnswer
from eko.llm.structured import output_schema
from eko.llm.types import (
    CallRecorder,
    ChatMessage,
    Completion,
    OutputT,
    Priority,
    Provider,
    ProviderRequest,
)

if TYPE_CHECKING:
    import httpx

    from eko.config import Settings

log = structlog.get_logger("eko.llm")


class AskOptions(TypedDict, total=False):
    """The keyword options `complete` and `stream` share; each may be left out.

    room_id, message_id: recorded with every attempt (None by default). max_tokens,
    temperature: None or missing means the runtime's default. stop: stop sequences (none by
    default). priority: "interactive" by default.
    """

    room_id: str | None
    message_id: str | None
    max_tokens: int | None
    temperature: float | None
    stop: Sequence[str]
    priority: Priority
    # An API caller's JSON or tools (eko/llm/caller_format.py): checked, re-asked once.
    caller_format: CallerFormat | None
    # Lines of the system prompt the answer may quote (ProviderRequest.quotable).
    quotable: Sequence[str]


class LLMRuntime:
    def __init__(
        self,
        providers: Sequence[Provider],
        recorder: CallRecorder | None = None,
        *,
        debug_dump_prompts: bool = False,
        default_max_tokens: int = 200,
        default_temperature: float = 0.7,
        assistant_name: str = "Eko",
        breaker_failures: int = 3,
        breaker_cooldown_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not providers:
            raise ValueError("LLMRuntime needs at least one provider")
        self.providers: tuple[Provider, ...] = tuple(providers)
        # One breaker per provider position (test doubles may share a name).
        self._breakers = [
            CircuitBreaker(
                p.name,
                failure_threshold=breaker_failures,
                cooldown_s=breaker_cooldown_s,
                clock=clock,
            )
            for p in self.providers
        ]
        # A subset's view of the providers it leaves out: its callers fall back to them
        # (a chain stage gives way to the simple path), so they count as fallbacks.
        self._reserve: list[CircuitBreaker] = []
        self._recorder = recorder
        self._debug_dump_prompts = debug_dump_prompts
        self._default_max_tokens = default_max_tokens
        self._default_temperature = default_temperature
        self._assistant_name = assistant_name

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        recorder: CallRecorder | None = None,
        *,
        providers: Sequence[Provider] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> LLMRuntime:
        """The runtime the settings describe: over `providers` when given, else over the
        configured ones (built with `transport`)."""
        from eko.llm.providers.factory import build_providers

        if providers is None:
            providers = build_providers(settings, transport=transport)
        return cls(
            providers,
            recorder,
            debug_dump_prompts=settings.debug_dump_prompts,
            default_max_tokens=settings.llm_max_tokens,
            default_temperature=default_temperature(settings.llm_temperature, providers[0]),
            assistant_name=settings.assistant_name,
            breaker_failures=settings.llm_breaker_failures,
            breaker_cooldown_s=settings.llm_breaker_cooldown_s,
        )

    def subset(
        self,
        providers: Sequence[Provider],
        *,
        adapt: Callable[[Provider], Provider] | None = None,
    ) -> LLMRuntime:
        """A runtime over some of this one's providers, in the given order (a chain stage's).

        It shares their circuit breakers, the call log and the settings, so a provider that
        fails in a stage is down for every caller (`any_available`, `breakers()`). `adapt`
        wraps each provider for this view only (e.g. with native tools); the breaker stays
        the wrapped provider's. Raises ValueError for a provider that is not one of this
        runtime's (every provider has exactly one breaker: the runtime that was built with it).
        The providers stay this runtime's to close: a view is never closed on its own.
        """
        if not providers:
            raise ValueError("a runtime subset needs at least one provider")
        positions = [self._position(provider) for provider in providers]
        view = copy.copy(self)  # the same recorder and settings, by reference
        chosen = [self.providers[i] for i in positions]
        view.providers = tuple(adapt(p) for p in chosen) if adapt is not None else tuple(chosen)
        view._breakers = [self._breakers[i] for i in positions]
        left_out = [b for i, b in enumerate(self._breakers) if i not in positions]
        view._reserve = [*left_out, *self._reserve]
        return view

    def _position(self, provider: Provider) -> int:
        for index, mine in enumerate(self.providers):
            if mine is provider:
                return index
        names = ", ".join(p.name for p in self.providers)
        raise ValueError(f"provider {provider.name!r} is not one of this runtime's ({names})")

    def breakers(self) -> list[BreakerSnapshot]:
        """Each provider's circuit breaker, in fallback order (for /health and doctor)."""
        return [breaker.snapshot() for breaker in self._breakers]

    def answering_provider(self) -> Provider:
        """The provider a call would go to now: the first whose breaker is not open, else
        the first."""
        return next(
            (p for p, b in zip(self.providers, self._breakers, strict=True) if b.available),
            self.providers[0],
        )

    def prompt_budget_tokens(self, *, max_tokens: int | None = None) -> int | None:
        """The prompt budget (tokens) of the provider a call would go to now — the first whose
        breaker is closed, else the first — for an answer of `max_tokens` (default: the
        configured one); None when that provider declares no limit."""
        chosen = self.answering_provider()
        answer = max_tokens if max_tokens is not None else self._default_max_tokens
        return prompt_budget_tokens(chosen, max_tokens=answer)

    def count_prompt_tokens(self, messages: Sequence[ChatMessage]) -> tuple[int, bool]:
        """`messages`' tokens as the provider a call would go to now reads them, and whether
        they were counted by its own tokenizer (the local model once loaded) — else estimated
        as the product sizes text (approx_prompt_tokens)."""
        return count_prompt_tokens(
            self.answering_provider(), messages, max_tokens=self._default_max_tokens
        )

    @property
    def any_available(self) -> bool:
        """False while every provider's breaker is open: background model work waits."""
        return any(b.available for b in self._breakers)

    @overload
    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        output: type[OutputT],
        purpose: str,
        **options: Unpack[AskOptions],
    ) -> Completion[OutputT]: ...

    @overload
    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        output: None = None,
        purpose: str,
        **options: Unpack[AskOptions],
    ) -> Completion[BaseModel]: ...

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        output: type[BaseModel] | None = None,
        purpose: str,
        **options: Unpack[AskOptions],
    ) -> Completion[Any]:
        """One answer from the first provider that gives a usable one (see walk_providers).

        Raises AllProvidersFailed when no provider gave a usable answer.
        """
        return await self._walk(messages, WholeAnswer(), purpose, output, options)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        on_delta: DeltaSink,
        purpose: str,
        on_begin: BeginSink | None = None,
        **options: Unpack[AskOptions],
    ) -> Completion[Any]:
        """A plain-text answer; each piece goes to `on_delta` as soon as it is known
        (`on_begin(provider, model)` first, when a provider's answer begins).

        Returns the Completion (its text is the provider's final, cleaned text), built as
        `complete` builds it. Raises AllProvidersFailed when no provider began an answer,
        StreamInterrupted when one broke after it began, CancelledError (after recording the
        attempt) when the caller stopped.
        """
        return await self._walk(
            messages, StreamedAnswer(on_delta, on_begin), purpose, None, options
        )

    async def _walk(
        self,
        messages: Sequence[ChatMessage],
        ask: ProviderAsk,
        purpose: str,
        output: type[BaseModel] | None,
        options: AskOptions,
    ) -> Completion[Any]:
        """The request with this runtime's defaults, through the one walk, asked `ask`'s way."""
        max_tokens = options.get("max_tokens")
        temperature = options.get("temperature")
        caller = options.get("caller_format")
        schema = (
            output_schema(output)
            if output is not None
            else caller.answer_schema()
            if caller is not None
            else None
        )
        request = ProviderRequest(
            messages=tuple(messages),
            json_schema=schema,
            caller_format=caller if output is None else None,
            max_tokens=max_tokens if max_tokens is not None else self._default_max_tokens,
            temperature=temperature if temperature is not None else self._default_temperature,
            stop=tuple(options.get("stop", ())),
            priority=options.get("priority", "interactive"),
            assistant_name=self._assistant_name,
            quotable=tuple(options.get("quotable", ())),
        )
        call = CallContext(
            purpose=purpose, room_id=options.get("room_id"), message_id=options.get("message_id")
        )
        attempts = AttemptLog(call, self._recorder, dump_prompts=self._debug_dump_prompts)
        return await walk_providers(
            self.providers,
            self._breakers,
            request,
            ask=ask,
            attempts=attempts,
            output=output,
            reserve=self._reserve,
        )

    @property
    def primary_is_small(self) -> bool:
        """Whether the first provider is a small local model (see is_small)."""
        return is_small(self.providers[0])

    async def aclose(self) -> None:
        for provider in self.providers:
            try:
                await provider.aclose()
            except Exception:
                log.warning("llm.close_failed", provider=provider.name, exc_info=True)


# The sampling temperature when none is configured, by the first provider's kind.
REMOTE_TEMPERATURE = 0.7
SMALL_MODEL_TEMPERATURE = 0.0


def default_temperature(configured: float | None, primary: Provider) -> float:
    """EKO_LLM_TEMPERATURE, or when unset: greedy for a small local model (its best answer
    is its most likely one), 0.7 for any other."""
    if configured is not None:
        return configured
    return SMALL_MODEL_TEMPERATURE if is_small(primary) else REMOTE_TEMPERATURE


def is_small(provider: Provider) -> bool:
    """A small local model: the paths that a 1.5B model cannot follow (routing, the lobby's
    decision) go by rules for it."""
    return bool(getattr(provider, "prefers_compact_output", False))
