"""A circuit breaker per provider: a provider that fails stays failed for a while.

closed     calls go through; a `severe` failure opens the breaker at once, other failures
           after `failure_threshold` in a row (eko.llm.failures decides which is which).
open       calls are skipped (the runtime goes straight to the next provider) until `cooldown_s`
           has passed.
half_open  one probe call is let through; success closes the breaker, failure re-opens it for
           another cooldown. Other calls keep skipping while the probe runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

BreakerState = Literal["closed", "open", "half_open"]


@dataclass(frozen=True, slots=True)
class BreakerSnapshot:
    provider: str
    state: BreakerState
    consecutive_failures: int
    # Seconds until an open breaker lets a probe through (0 when not open).
    retry_in_s: float
    last_error: str | None


class CircuitBreaker:
    def __init__(
        self,
        provider: str,
        *,
        failure_threshold: int = 3,
        cooldown_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.provider = provider
        self._threshold = failure_threshold
        self._cooldown_s = cooldown_s
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._probing = False
        self._last_error: str | None = None

    @property
    def state(self) -> BreakerState:
        if self._opened_at is None:
            return "closed"
        if self._clock() - self._opened_at >= self._cooldown_s:
            return "half_open"
        return "open"

    def allow(self) -> bool:
        """May a call go to this provider now? Takes the probe slot when half-open."""
        state = self.state
        if state == "closed":
            return True
        if state == "half_open" and not self._probing:
            self._probing = True
            return True
        return False

    def release(self) -> None:
        """A call let through ended without a verdict on the provider (e.g. the caller's own
        deadline cut it): free the probe slot without changing the state."""
        self._probing = False

    def record_success(self) -> None:
        self._failures = 0
        self._opened_at = None
        self._probing = False
        self._last_error = None

    def record_failure(self, error: str, *, severe: bool) -> None:
        """`severe`: a timeout or an unreachable provider, which opens the breaker at once."""
        self._failures += 1
        self._last_error = error[:300]
        half_open_probe_failed = self._probing
        self._probing = False
        if severe or half_open_probe_failed or self._failures >= self._threshold:
            self._opened_at = self._clock()

    @property
    def available(self) -> bool:
        """Not known to be down: closed, or due for a probe."""
        return self.state != "open"

    def snapshot(self) -> BreakerSnapshot:
        retry_in = 0.0
        if self._opened_at is not None:
            retry_in = max(0.0, self._cooldown_s - (self._clock() - self._opened_at))
        return BreakerSnapshot(
            provider=self.provider,
            state=self.state,
            consecutive_failures=self._failures,
            retry_in_s=round(retry_in, 1),
            last_error=self._last_error,
        )
