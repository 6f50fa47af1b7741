"""What a failed try at one provider means: its outcome in the call log and the breaker's verdict.

One classification for every way of asking a provider (whole or streamed), so a failure
counts the same against the provider's circuit breaker whichever path met it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import structlog

from eko.llm.breaker import CircuitBreaker
from eko.llm.errors import (
    AllProvidersFailed,
    InvalidOutput,
    LLMError,
    PromptTooLong,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
)
from eko.llm.types import Attempt, FailureCause, Outcome

log = structlog.get_logger("eko.llm")

# answered: the provider is up, whatever it said (a success for the breaker)
# down:     a timeout, or an unreachable host while a fallback waits: opens the breaker at once
# failed:   counts towards the breaker's threshold (failures in a row)
# none:     says nothing about the provider's health (the breaker's probe slot is freed)
Verdict = Literal["answered", "down", "failed", "none"]

# The verdict on an answer with no text at all: garbage, like an unreadable response.
EMPTY_ANSWER = "empty answer"


@dataclass(frozen=True, slots=True)
class Failure:
    outcome: Outcome  # "invalid" (it answered, unusably) or "error"
    error: str
    verdict: Verdict
    cause: FailureCause = "error"


def failure_of(
    exc: Exception,
    provider: str,
    *,
    left: float | None,
    budget_is_share: bool,
    fallback: bool = False,
    slow_means_busy: bool = False,
) -> Failure:
    """Classify what one try raised. `left`: the seconds it had (None: no deadline);
    `budget_is_share`: a later provider was waiting for the rest of the deadline; `fallback`:
    a later provider not known to be down could answer instead; `slow_means_busy`: the
    provider runs in this process, one call at a time (the local model), so running out of
    time says it is busy, never that it is down."""
    if isinstance(exc, TimeoutError):
        # The message's deadline (this provider's share of it) ran out first. With a share, a
        # fallback is waiting: treat it as hung, so the next calls go straight to the fallback.
        # The last resort running out of the message's time says nothing about its health.
        error = f"no answer within this message's deadline ({left or 0.0:.1f} s left)"
        hung = budget_is_share and not slow_means_busy
        late: FailureCause = "busy" if slow_means_busy else "timeout"
        return Failure("error", error, "down" if hung else "none", late)
    if isinstance(exc, ProviderTimeout) and slow_means_busy:
        return Failure("error", str(exc), "none", "busy")
    if isinstance(exc, ProviderError):
        outcome: Outcome = "invalid" if isinstance(exc, InvalidOutput) else "error"
        verdict = _provider_error_verdict(exc, fallback=fallback)
        return Failure(outcome, str(exc), verdict, _cause_of(exc))
    # A provider bug must not take the whole answer down while others remain.
    log.error("llm.provider_crashed", provider=provider, exc_info=exc)
    return Failure("error", f"{type(exc).__name__}: {exc}", "failed")


def _cause_of(exc: ProviderError) -> FailureCause:
    if isinstance(exc, ProviderTimeout):
        return "timeout"
    if isinstance(exc, ProviderUnavailable):
        return "unreachable"
    return "error"


def empty_answer() -> Failure:
    """A response with no text: the provider is reachable but its answers are unusable."""
    return Failure("invalid", EMPTY_ANSWER, "failed")


def _provider_error_verdict(exc: ProviderError, *, fallback: bool) -> Verdict:
    """Timeouts open the breaker at once (each try would cost the whole deadline). An
    unreachable host does too while a fallback can answer instead; the only provider left
    counts it up to the threshold, so that one connection error does not turn the next
    EKO_LLM_BREAKER_COOLDOWN_S of answers into apologies (a host that stays down fails fast
    and opens it after EKO_LLM_BREAKER_FAILURES in a row). HTTP 429/5xx count up to the
    threshold; other HTTP errors (401, 404: configuration) count too, since retrying them on
    every call only adds latency. Garbage — a response that cannot be read (InvalidOutput) —
    counts too: a provider that keeps answering garbage is as useless as one that is down.
    A prompt too long for this model still means the provider is up."""
    if isinstance(exc, PromptTooLong):
        return "answered"
    if isinstance(exc, ProviderTimeout):
        return "down"
    if isinstance(exc, ProviderUnavailable):
        return "down" if fallback else "failed"
    return "failed"


def tell_breaker(breaker: CircuitBreaker, failure: Failure) -> None:
    """Give the breaker the failure's verdict; log when that opens it."""
    if failure.verdict == "answered":
        breaker.record_success()
        return
    if failure.verdict == "none":
        breaker.release()
        return
    was = breaker.state
    breaker.record_failure(failure.error, severe=failure.verdict == "down")
    if breaker.state != was:
        log.warning(
            "llm.breaker_opened",
            provider=breaker.provider,
            error=failure.error[:200],
            severe=failure.verdict == "down",
        )


# The most telling cause first: a person waiting is told the model was busy rather than
# "timed out", and "timed out" rather than a generic error.
_CAUSE_ORDER: tuple[FailureCause, ...] = ("busy", "timeout", "unreachable", "error")


def cause_of_walk(
    attempts: Sequence[Attempt], *, skipped: Sequence[str] = (), timed_out: bool = False
) -> FailureCause:
    """Why no provider answered, for a person: from each failed try's cause; no try at all
    (every circuit open) is unreachable; the message's deadline spent is a timeout unless the
    local model was busy."""
    causes = {a.cause or "error" for a in attempts if a.outcome in ("error", "invalid")}
    if timed_out:
        return "busy" if "busy" in causes else "timeout"
    if not causes:
        return "unreachable" if skipped else "error"
    return next(c for c in _CAUSE_ORDER if c in causes)


def cause_of_error(exc: LLMError) -> FailureCause:
    """Why a model call raised, for a person (see cause_of_walk)."""
    if isinstance(exc, AllProvidersFailed):
        return cause_of_walk(exc.attempts, skipped=exc.skipped, timed_out=exc.timed_out)
    if isinstance(exc, ProviderError):
        return _cause_of(exc)
    return "error"
