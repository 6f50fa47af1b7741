"""What a failed try at one provider means: its outcome in the call log and the breaker's verdict.

One classification for every way of asking a provider (whole or streamed), so a failure
counts the same against the provider's circuit breaker whichever path met it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import structlog

from eko.llm.breaker import CircuitBreaker
from eko.llm.errors import (
    InvalidOutput,
    PromptTooLong,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
)
from eko.llm.types import Outcome

log = structlog.get_logger("eko.llm")

# answered: the provider is up, whatever it said (a success for the breaker)
# down:     a timeout or an unreachable host, which opens the breaker at once
# failed:   counts towards the breaker's threshold
# none:     says nothing about the provider's health (the breaker's probe slot is freed)
Verdict = Literal["answered", "down", "failed", "none"]


@dataclass(frozen=True, slots=True)
class Failure:
    outcome: Outcome  # "invalid" (it answered, unusably) or "error"
    error: str
    verdict: Verdict


def failure_of(
    exc: Exception, provider: str, *, left: float | None, budget_is_share: bool
) -> Failure:
    """Classify what one try raised. `left`: the seconds it had (None: no deadline);
    `budget_is_share`: a later provider was waiting for the rest of the deadline."""
    if isinstance(exc, TimeoutError):
        # The message's deadline (this provider's share of it) ran out first. With a share, a
        # fallback is waiting: treat it as hung, so the next calls go straight to the fallback.
        # The last resort running out of the message's time says nothing about its health.
        error = f"no answer within this message's deadline ({left or 0.0:.1f} s left)"
        return Failure("error", error, "down" if budget_is_share else "none")
    if isinstance(exc, ProviderError):
        outcome: Outcome = "invalid" if isinstance(exc, InvalidOutput) else "error"
        return Failure(outcome, str(exc), _provider_error_verdict(exc))
    # A provider bug must not take the whole answer down while others remain.
    log.error("llm.provider_crashed", provider=provider, exc_info=exc)
    return Failure("error", f"{type(exc).__name__}: {exc}", "failed")


def _provider_error_verdict(exc: ProviderError) -> Verdict:
    """Timeouts and unreachable hosts open the breaker at once; HTTP 429/5xx count up to the
    threshold; other HTTP errors (401, 404: configuration) count too, since retrying them on
    every call only adds latency. An unusable answer or a prompt too long for this model
    still means the provider is up."""
    if isinstance(exc, InvalidOutput | PromptTooLong):
        return "answered"
    if isinstance(exc, ProviderTimeout | ProviderUnavailable):
        return "down"
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
