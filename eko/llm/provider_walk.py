"""The one walk over providers, for `complete` and `stream` alike.

Which provider to try next, with how much of the message's deadline; each try's verdict for
the provider's circuit breaker (eko.llm.failures); every attempt closed in the call log
(eko.llm.call_log); structured output validated (an output model, or an API caller's JSON or
tools: eko/llm/caller_format.py), with one corrective re-ask of the same provider; the
Completion built; the error when none answered. How one provider is asked — whole, or delta
by delta — is the only thing the caller brings (a ProviderAsk).

A provider is passed over when its circuit is open or when what is left of the deadline is
too short to start a call (a later provider may still fit). Budgets are computed as each
provider's turn comes, so time spent on earlier ones counts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import structlog
from pydantic import BaseModel

from eko.llm.breaker import CircuitBreaker
from eko.llm.call_log import AttemptLog, elapsed_ms
from eko.llm.correction import describe_invalid, with_correction
from eko.llm.deadline import remaining_s, time_limit
from eko.llm.errors import AllProvidersFailed
from eko.llm.failures import EMPTY_ANSWER, empty_answer, failure_of, tell_breaker
from eko.llm.structured import StructuredOutputError, parse_output
from eko.llm.types import Attempt, Completion, Outcome, Provider, ProviderRequest, ProviderResponse

log = structlog.get_logger("eko.llm")

# Below this, a provider call is not worth starting: the message's deadline is spent.
MIN_CALL_BUDGET_S = 0.5


@dataclass(frozen=True, slots=True)
class ProviderTurn:
    index: int
    provider: Provider
    breaker: CircuitBreaker  # allow() was granted: the caller owes it a verdict or a release
    budget: float | None  # seconds this call may take (None: no deadline)
    budget_is_share: bool  # half of what is left, a later provider could still answer
    fallback: bool  # a later provider not known to be down could answer instead


def provider_budget(breakers: Sequence[CircuitBreaker], index: int) -> tuple[float | None, bool]:
    """Seconds provider `index` may take: what is left of the message's deadline, or half of
    it (a share) when a later provider that is not known to be down could still answer."""
    remaining = remaining_s()
    if remaining is None:
        return None, False
    later = any(b.available for b in breakers[index + 1 :])
    return (remaining / 2, True) if later else (remaining, False)


def provider_turns(
    providers: Sequence[Provider],
    breakers: Sequence[CircuitBreaker],
    skipped: list[str],
    *,
    purpose: str,
    reserve: Sequence[CircuitBreaker] = (),
) -> Iterator[ProviderTurn]:
    """The providers to try, in order; the ones passed over are appended to `skipped`.
    `reserve`: breakers of providers the caller falls back to outside this walk."""
    for index, provider in enumerate(providers):
        breaker = breakers[index]
        if not breaker.allow():
            skipped.append(provider.name)
            log.info("llm.skipped", purpose=purpose, provider=provider.name, reason="breaker")
            continue
        budget, shared = provider_budget(breakers, index)
        if budget is not None and budget < MIN_CALL_BUDGET_S:
            breaker.release()
            skipped.append(provider.name)
            log.warning("llm.skipped", purpose=purpose, provider=provider.name, reason="deadline")
            continue  # a later provider may still fit in what is left
        fallback = any(b.available for b in (*breakers[index + 1 :], *reserve))
        yield ProviderTurn(index, provider, breaker, budget, shared, fallback)


def none_answered(attempts: Sequence[Attempt], skipped: Sequence[str]) -> AllProvidersFailed:
    remaining = remaining_s()
    return AllProvidersFailed(
        tuple(attempts),
        skipped=tuple(skipped),
        timed_out=remaining is not None and remaining < MIN_CALL_BUDGET_S,
    )


class ProviderAsk(Protocol):
    """One way of asking one provider for its answer; the walk does everything else."""

    async def answer(self, provider: Provider, request: ProviderRequest) -> ProviderResponse:
        """The provider's answer; raises whatever the provider raised."""
        ...

    def failed(self, error: str, attempts: Sequence[Attempt]) -> None:
        """Heard after a failed try was recorded. May end the walk by raising: an answer
        already shown in part cannot be replaced by another provider's."""
        ...

    def progress(self) -> str:
        """What was handed out so far, for the attempt of a call its caller stopped."""
        ...


class WholeAnswer:
    """`complete`'s way: the provider's whole answer, nothing shown before it is known."""

    async def answer(self, provider: Provider, request: ProviderRequest) -> ProviderResponse:
        return await provider.generate(request)

    def failed(self, error: str, attempts: Sequence[Attempt]) -> None:
        return None

    def progress(self) -> str:
        return ""


async def walk_providers(
    providers: Sequence[Provider],
    breakers: Sequence[CircuitBreaker],
    request: ProviderRequest,
    *,
    ask: ProviderAsk,
    attempts: AttemptLog,
    output: type[BaseModel] | None = None,
    reserve: Sequence[CircuitBreaker] = (),
) -> Completion[Any]:
    """The first usable answer, asking each provider in turn. `reserve`: the breakers of
    providers the caller falls back to when this walk fails (a runtime subset's others).

    `Completion.usage` is the successful attempt's; every attempt is in `attempts` (and in
    the call log). `duration_ms` is the whole call, fallbacks included. Raises
    AllProvidersFailed when no provider gave a usable answer, and whatever `ask.failed` raises.
    """
    started = time.perf_counter()
    skipped: list[str] = []
    turns = provider_turns(
        providers, breakers, skipped, purpose=attempts.call.purpose, reserve=reserve
    )
    for turn in turns:
        try:
            answer = await _ask_provider(turn, request, ask, attempts, output)
        except BaseException:
            turn.breaker.release()  # cancelled mid-call: no verdict on the provider
            raise
        if answer is not None:
            return Completion(
                text=answer.text,
                data=answer.data,
                provider=turn.provider.name,
                model=answer.model,
                usage=answer.response.usage,
                duration_ms=elapsed_ms(started),
                attempts=tuple(attempts.attempts),
                truncated=answer.response.truncated,
                input_cut=answer.response.input_cut,
                tool_calls=answer.response.tool_calls,
            )
    raise none_answered(attempts.attempts, skipped)


@dataclass(frozen=True, slots=True)
class _Answer:
    text: str
    data: BaseModel | None
    model: str
    response: ProviderResponse


async def _ask_provider(
    turn: ProviderTurn,
    request: ProviderRequest,
    ask: ProviderAsk,
    attempts: AttemptLog,
    output: type[BaseModel] | None,
) -> _Answer | None:
    """One provider: one try, plus one corrective re-ask for structured output.

    Returns the usable answer, or None when this provider failed and the next should try.
    The breaker hears the verdict: a text answer means the provider is up (even one that does
    not fit the requested structure: that is the model's, not the provider's health); no
    text, or an unreadable response, counts as a failure.
    """
    provider, breaker = turn.provider, turn.breaker
    caller = request.caller_format
    tries = 2 if output is not None or caller is not None else 1
    deadline = None if turn.budget is None else time.perf_counter() + turn.budget
    for try_number in range(tries):
        started = time.perf_counter()
        left = None if deadline is None else deadline - started
        if left is not None and left < MIN_CALL_BUDGET_S:
            breaker.release()
            return None
        try:
            # A limit whose clock stops while the call waits in a local model's line; what it
            # waited does not count against a corrective re-ask either.
            async with time_limit(left) as clock:
                try:
                    response = await ask.answer(provider, request)
                finally:
                    if deadline is not None:
                        deadline += clock.paused_s
        except asyncio.CancelledError:
            breaker.release()
            stopped = f"stopped by the caller{ask.progress()}"
            await _shielded(attempts.close(provider, request, "error", started, error=stopped))
            raise
        except Exception as exc:
            failure = failure_of(
                exc,
                provider.name,
                left=left,
                budget_is_share=turn.budget_is_share,
                fallback=turn.fallback,
                slow_means_busy=getattr(provider, "slow_means_busy", False),
            )
            tell_breaker(breaker, failure)
            await attempts.close(
                provider,
                request,
                failure.outcome,
                started,
                error=failure.error,
                cause=failure.cause,
            )
            ask.failed(failure.error, attempts.attempts)
            return None
        text = response.text.strip()
        if not text and not response.tool_calls:
            # Garbage: counts towards the breaker like an error (eko.llm.failures).
            tell_breaker(breaker, empty_answer())
            await attempts.close(
                provider, request, "invalid", started, response=response, error=EMPTY_ANSWER
            )
            ask.failed(EMPTY_ANSWER, attempts.attempts)
            return None
        breaker.record_success()

        data: BaseModel | None = None
        if output is not None or caller is not None:
            try:
                if output is not None:
                    data = parse_output(text, output)
                else:
                    assert caller is not None
                    response = caller.read(response)  # JSON bare, tool calls checked
                    text = response.text.strip()
            except StructuredOutputError as exc:
                error = describe_invalid(exc.summary, response)
                await attempts.close(
                    provider, request, "invalid", started, response=response, error=error
                )
                if response.truncated:
                    # Cut at max_tokens: a re-ask with the same budget and a longer prompt
                    # is cut again (and on a local model costs seconds).
                    return None
                request = with_correction(request, text, exc.summary)
                continue

        outcome: Outcome = "ok" if turn.index == 0 and try_number == 0 else "fallback"
        attempt = await attempts.close(provider, request, outcome, started, response=response)
        return _Answer(text=text, data=data, model=attempt.model, response=response)
    return None


async def _shielded(awaitable: Awaitable[Any]) -> None:
    """Finish recording even though the surrounding task is being cancelled."""
    task = asyncio.ensure_future(awaitable)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
