"""LLMRuntime.stream: one plain-text answer handed out delta by delta, with the same fallback.

A provider that fails before its first delta is skipped silently, as `complete` does (the next
one streams instead). Once a delta was handed out the answer has begun: a failure then ends the
call with `StreamInterrupted`, carrying the text shown so far. Stopping (cancelling the caller)
closes the provider's stream, which stops the generation. Every attempt is one llm_calls row,
like `complete`'s; a provider without `stream` answers whole, as a single delta.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

import structlog

from eko.llm.call_log import CallContext
from eko.llm.errors import (
    InvalidOutput,
    LLMError,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
)
from eko.llm.provider_walk import none_answered, provider_turns
from eko.llm.types import (
    Attempt,
    ChatMessage,
    Completion,
    Priority,
    Provider,
    ProviderRequest,
    ProviderResponse,
    StreamingProvider,
)

if TYPE_CHECKING:
    from eko.llm.breaker import CircuitBreaker
    from eko.llm.types import Outcome

log = structlog.get_logger("eko.llm")

DeltaSink = Callable[[str], None]


class StreamInterrupted(LLMError):
    """The answer broke after it began: `partial` is the text handed out before the failure."""

    def __init__(self, partial: str, attempts: tuple[Attempt, ...], error: str) -> None:
        super().__init__(f"the answer stream broke after {len(partial)} characters: {error}")
        self.partial = partial
        self.attempts = attempts
        self.error = error


class _Broken(Exception):
    """Internal: one provider's stream failed; `begun` says whether a delta was handed out."""

    def __init__(self, outcome: Outcome, error: str, *, begun: bool, severe: bool) -> None:
        super().__init__(error)
        self.outcome = outcome
        self.error = error
        self.begun = begun
        self.severe = severe


class StreamingRuntime:
    """Mixed into LLMRuntime: the attributes below are LLMRuntime's."""

    providers: tuple[Provider, ...]
    _breakers: list[CircuitBreaker]
    _default_max_tokens: int
    _default_temperature: float
    _assistant_name: str

    if TYPE_CHECKING:

        def _verdict(self, breaker: CircuitBreaker, error: str, *, severe: bool) -> None: ...

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
        ) -> Attempt: ...

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        on_delta: DeltaSink,
        purpose: str,
        on_begin: Callable[[str, str], None] | None = None,
        room_id: str | None = None,
        message_id: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Sequence[str] = (),
        priority: Priority = "interactive",
    ) -> Completion[Any]:
        """A plain-text answer; each piece goes to `on_delta` as soon as it is known
        (`on_begin(provider, model)` first, when a provider's answer begins).

        Returns the Completion (its text is the provider's final, cleaned text). Raises
        AllProvidersFailed when no provider began an answer, StreamInterrupted when one broke
        after it began, CancelledError (after recording the attempt) when the caller stopped.
        """
        started = time.perf_counter()
        request = ProviderRequest(
            messages=tuple(messages),
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
            provider, breaker, budget = turn.provider, turn.breaker, turn.budget
            shown: list[str] = []
            attempt_started = time.perf_counter()

            def sink(delta: str, shown: list[str] = shown, provider: Provider = provider) -> None:
                if not shown and on_begin is not None:
                    on_begin(provider.name, provider.model)
                shown.append(delta)
                on_delta(delta)

            try:
                response = await _one_stream(provider, request, sink, budget)
            except _Broken as broken:
                if broken.outcome == "invalid":
                    breaker.record_success()
                else:
                    self._verdict(breaker, broken.error, severe=broken.severe)
                await self._attempt(
                    attempts,
                    call,
                    provider,
                    request,
                    broken.outcome,
                    attempt_started,
                    error=broken.error,
                )
                if broken.begun:
                    raise StreamInterrupted("".join(shown), tuple(attempts), broken.error) from None
                continue
            except asyncio.CancelledError:
                breaker.release()
                await _shielded(
                    self._attempt(
                        attempts,
                        call,
                        provider,
                        request,
                        "error",
                        attempt_started,
                        error=f"stopped by the caller after {len(shown)} deltas",
                    )
                )
                raise
            breaker.record_success()
            outcome: Outcome = "ok" if turn.index == 0 else "fallback"
            attempt = await self._attempt(
                attempts, call, provider, request, outcome, attempt_started, response=response
            )
            return Completion(
                text=response.text.strip(),
                data=None,
                provider=provider.name,
                model=attempt.model,
                usage=response.usage,
                duration_ms=(time.perf_counter() - started) * 1000.0,
                attempts=tuple(attempts),
                truncated=response.truncated,
            )
        raise none_answered(attempts, skipped)


async def _one_stream(
    provider: Provider, request: ProviderRequest, sink: DeltaSink, budget: float | None
) -> ProviderResponse:
    """One provider's answer, its deltas sent to `sink`; failures become _Broken."""
    begun = False
    response: ProviderResponse | None = None
    try:
        async with asyncio.timeout(budget):
            if not isinstance(provider, StreamingProvider):
                response = await provider.generate(request)
                if response.text.strip():
                    begun = True
                    sink(response.text.strip())
            else:
                async with aclosing(provider.stream(request)) as items:
                    async for item in items:
                        if isinstance(item, ProviderResponse):
                            response = item
                            break
                        if item:
                            begun = True
                            sink(item)
                if response is None:
                    raise InvalidOutput(provider.name, "the stream ended without a response")
    except TimeoutError:
        error = f"no answer within this message's deadline ({budget or 0:.1f} s)"
        raise _Broken("error", error, begun=begun, severe=True) from None
    except InvalidOutput as exc:
        raise _Broken("invalid", str(exc), begun=begun, severe=False) from None
    except ProviderError as exc:
        severe = isinstance(exc, ProviderTimeout | ProviderUnavailable)  # as `complete` rules
        raise _Broken("error", str(exc), begun=begun, severe=severe) from None
    except Exception as exc:
        log.exception("llm.provider_crashed", provider=provider.name)
        raise _Broken("error", f"{type(exc).__name__}: {exc}", begun=begun, severe=False) from None
    if response is None or not response.text.strip():
        raise _Broken("invalid", "empty answer", begun=begun, severe=False)
    return response


async def _shielded(awaitable: Any) -> None:
    """Finish recording even though the surrounding task is being cancelled."""
    task = asyncio.ensure_future(awaitable)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
