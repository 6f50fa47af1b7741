"""The walk over providers that `complete` and `stream` share: which provider to try next,
with how much of the message's deadline, and the error when none answered.

A provider is passed over when its circuit is open or when what is left of the deadline is
too short to start a call (a later provider may still fit). Budgets are computed as each
provider's turn comes, so time spent on earlier ones counts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import structlog

from eko.llm.breaker import CircuitBreaker
from eko.llm.deadline import remaining_s
from eko.llm.errors import AllProvidersFailed
from eko.llm.types import Attempt, Provider

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
) -> Iterator[ProviderTurn]:
    """The providers to try, in order; the ones passed over are appended to `skipped`."""
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
        yield ProviderTurn(index, provider, breaker, budget, shared)


def none_answered(attempts: Sequence[Attempt], skipped: Sequence[str]) -> AllProvidersFailed:
    remaining = remaining_s()
    return AllProvidersFailed(
        tuple(attempts),
        skipped=tuple(skipped),
        timed_out=remaining is not None and remaining < MIN_CALL_BUDGET_S,
    )
