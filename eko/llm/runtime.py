"""LLMRuntime: the one entry point every service uses to call a model.

It tries the configured providers in order and falls back on any provider failure (transport,
HTTP, timeout, unusable or empty output). With an output model it asks for that JSON schema,
validates the answer, and re-asks the same provider once with the validation error before
falling back (unless the answer was cut at max_tokens: the same budget would cut it again).
Every attempt is recorded (one llm_calls row each) and logged as `llm.call`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import structlog
from pydantic import BaseModel

from eko.llm.breaker import BreakerSnapshot, CircuitBreaker
from eko.llm.call_log import CallContext, call_record, render_prompt_dump, write_call
from eko.llm.correction import describe_invalid, with_correction
from eko.llm.errors import (
    InvalidOutput,
    PromptTooLong,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
)
from eko.llm.provider_walk import MIN_CALL_BUDGET_S, none_answered, provider_turns
from eko.llm.streaming import StreamingRuntime
from eko.llm.structured import StructuredOutputError, output_schema, parse_output
from eko.llm.types import (
    Attempt,
    CallRecorder,
    ChatMessage,
    Completion,
    Outcome,
    OutputT,
    Priority,
    Provider,
    ProviderRequest,
    ProviderResponse,
    Usage,
)

if TYPE_CHECKING:
    import httpx

    from eko.config import Settings

log = structlog.get_logger("eko.llm")


class LLMRuntime(StreamingRuntime):  # stream(): eko/llm/streaming.py
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
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> LLMRuntime:
        from eko.llm.providers.factory import build_providers

        return cls(
            build_providers(settings, transport=transport),
            recorder,
            debug_dump_prompts=settings.debug_dump_prompts,
            default_max_tokens=settings.llm_max_tokens,
            default_temperature=settings.llm_temperature,
            assistant_name=settings.assistant_name,
            breaker_failures=settings.llm_breaker_failures,
            breaker_cooldown_s=settings.llm_breaker_cooldown_s,
        )

    def breakers(self) -> list[BreakerSnapshot]:
        """Each provider's circuit breaker, in fallback order (for /health and doctor)."""
        return [breaker.snapshot() for breaker in self._breakers]

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
        room_id: str | None = None,
        message_id: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Sequence[str] = (),
        priority: Priority = "interactive",
    ) -> Completion[OutputT]: ...

    @overload
    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        output: None = None,
        purpose: str,
        room_id: str | None = None,
        message_id: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Sequence[str] = (),
        priority: Priority = "interactive",
    ) -> Completion[BaseModel]: ...

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        output: type[BaseModel] | None = None,
        purpose: str,
        room_id: str | None = None,
        message_id: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Sequence[str] = (),
        priority: Priority = "interactive",
    ) -> Completion[Any]:
        """One answer from the first provider that gives a usable one.

        `Completion.usage` is the successful attempt's; every attempt's usage is in `attempts`
        (and in the call log). `duration_ms` is the whole call, fallbacks included.
        Raises AllProvidersFailed when no provider gave a usable answer.
        """
        started = time.perf_counter()
        base_request = ProviderRequest(
            messages=tuple(messages),
            json_schema=output_schema(output) if output is not None else None,
            max_tokens=max_tokens if max_tokens is not None else self._default_max_tokens,
            temperature=temperature if temperature is not None else self._default_temperature,
            stop=tuple(stop),
            priority=priority,
            assistant_name=self._assistant_name,
        )
        call = CallContext(purpose=purpose, room_id=room_id, message_id=message_id)
        attempts: list[Attempt] = []
        skipped: list[str] = []
        for turn in provider_turns(self.providers, self._breakers, skipped, purpose=purpose):
            provider, breaker = turn.provider, turn.breaker
            try:
                answer = await self._ask(
                    provider,
                    base_request,
                    output,
                    call,
                    attempts,
                    first=turn.index == 0,
                    budget=turn.budget,
                    budget_is_share=turn.budget_is_share,
                    breaker=breaker,
                )
            except BaseException:
                breaker.release()  # cancelled mid-call (a caller's timeout): no verdict
                raise
            if answer is not None:
                return Completion(
                    text=answer.text,
                    data=answer.data,
                    provider=provider.name,
                    model=answer.model,
                    usage=answer.response.usage,
                    duration_ms=_elapsed_ms(started),
                    attempts=tuple(attempts),
                    truncated=answer.response.truncated,
                    input_cut=answer.response.input_cut,
                )
        raise none_answered(attempts, skipped)

    async def _ask(
        self,
        provider: Provider,
        request: ProviderRequest,
        output: type[BaseModel] | None,
        call: CallContext,
        attempts: list[Attempt],
        *,
        first: bool,
        budget: float | None,
        budget_is_share: bool,
        breaker: CircuitBreaker,
    ) -> _Answer | None:
        """One provider: one try, plus one corrective re-ask for structured output.

        Returns the usable answer, or None when this provider failed and the next should try.
        The breaker hears the verdict: an answer (even an invalid one) means the provider is up.
        """
        tries = 2 if output is not None else 1
        deadline = None if budget is None else time.perf_counter() + budget
        for try_number in range(tries):
            started = time.perf_counter()
            left = None if deadline is None else deadline - started
            if left is not None and left < MIN_CALL_BUDGET_S:
                breaker.release()
                return None
            try:
                async with asyncio.timeout(left):
                    response = await provider.generate(request)
            except TimeoutError:
                # The message's deadline (this provider's share of it) ran out first.
                error = f"no answer within this message's deadline ({left:.1f} s left)"
                if budget_is_share:
                    # It had its share and a fallback is waiting: treat it as hung, so the
                    # next calls go straight to the fallback.
                    self._verdict(breaker, error, severe=True)
                else:
                    # The last resort ran out of the message's time: no verdict on its health.
                    breaker.release()
                await self._attempt(
                    attempts, call, provider, request, "error", started, error=error
                )
                return None
            except ProviderError as exc:
                outcome: Outcome = "invalid" if isinstance(exc, InvalidOutput) else "error"
                if isinstance(exc, InvalidOutput | PromptTooLong):
                    breaker.record_success()  # it answered: up, whatever it said
                else:
                    self._verdict(breaker, str(exc), severe=_is_severe(exc))
                await self._attempt(
                    attempts, call, provider, request, outcome, started, error=str(exc)
                )
                return None
            except Exception as exc:
                # A provider bug must not take the whole answer down while others remain.
                log.exception("llm.provider_crashed", provider=provider.name)
                error = f"{type(exc).__name__}: {exc}"
                self._verdict(breaker, error, severe=False)
                await self._attempt(
                    attempts, call, provider, request, "error", started, error=error
                )
                return None
            breaker.record_success()

            text = response.text.strip()
            if not text:
                await self._attempt(
                    attempts,
                    call,
                    provider,
                    request,
                    "invalid",
                    started,
                    response=response,
                    error="empty answer",
                )
                return None

            data: BaseModel | None = None
            if output is not None:
                try:
                    data = parse_output(text, output)
                except StructuredOutputError as exc:
                    await self._attempt(
                        attempts,
                        call,
                        provider,
                        request,
                        "invalid",
                        started,
                        response=response,
                        error=describe_invalid(exc.summary, response),
                    )
                    if response.truncated:
                        # Cut at max_tokens: a re-ask with the same budget and a longer prompt
                        # is cut again (and on a local model costs seconds).
                        return None
                    request = with_correction(request, text, exc.summary)
                    continue

            outcome = "ok" if first and try_number == 0 else "fallback"
            attempt = await self._attempt(
                attempts, call, provider, request, outcome, started, response=response
            )
            return _Answer(text=text, data=data, model=attempt.model, response=response)
        return None

    def _verdict(self, breaker: CircuitBreaker, error: str, *, severe: bool) -> None:
        was = breaker.state
        breaker.record_failure(error, severe=severe)
        if breaker.state != was:
            log.warning(
                "llm.breaker_opened", provider=breaker.provider, error=error[:200], severe=severe
            )

    async def aclose(self) -> None:
        for provider in self.providers:
            try:
                await provider.aclose()
            except Exception:
                log.warning("llm.close_failed", provider=provider.name, exc_info=True)

    async def _attempt(
        self,
        attempts: list[Attempt],
        call: CallContext,
        provider: Provider,
        request: ProviderRequest,
        outcome: Outcome,
        started: float,
        *,
        response: ProviderResponse | None = None,
        error: str | None = None,
    ) -> Attempt:
        """Close one attempt: remember it, log it, record it."""
        usage = response.usage if response is not None else Usage()
        attempt = Attempt(
            provider=provider.name,
            model=(response.model if response is not None and response.model else provider.model),
            outcome=outcome,
            duration_ms=_elapsed_ms(started),
            usage=usage,
            error=error,
        )
        attempts.append(attempt)
        log_method = log.info if outcome in ("ok", "fallback") else log.warning
        log_method(
            "llm.call",
            purpose=call.purpose,
            provider=attempt.provider,
            model=attempt.model,
            outcome=outcome,
            attempt=len(attempts),
            duration_ms=round(attempt.duration_ms, 1),
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            truncated=response.truncated if response is not None else None,
            room_id=call.room_id,
            message_id=call.message_id,
            error=error,
        )
        record = call_record(
            call, attempt, prompt=render_prompt_dump(request) if self._debug_dump_prompts else None
        )
        await write_call(self._recorder, record)
        return attempt


@dataclass(frozen=True, slots=True)
class _Answer:
    text: str
    data: BaseModel | None
    model: str
    response: ProviderResponse


def _is_severe(exc: ProviderError) -> bool:
    """Timeouts and unreachable hosts open the breaker at once; HTTP 429/5xx count up to the
    threshold; other HTTP errors (401, 404: configuration) count too, since retrying them on
    every call only adds latency."""
    return isinstance(exc, ProviderTimeout | ProviderUnavailable)


def _elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
