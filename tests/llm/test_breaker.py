"""Circuit breaker: providers that fail stay failed for a cooldown, then get one probe."""

from __future__ import annotations

from eko.llm.breaker import CircuitBreaker


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_severe_failure_opens_at_once_and_skips_until_cooldown() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("p", failure_threshold=3, cooldown_s=30, clock=clock)
    assert breaker.allow()
    breaker.record_failure("timeout", severe=True)
    assert breaker.state == "open"
    assert not breaker.allow()
    assert not breaker.available
    clock.now += 29
    assert not breaker.allow()
    assert breaker.snapshot().retry_in_s == 1.0


def test_ordinary_failures_open_only_at_the_threshold_in_a_row() -> None:
    breaker = CircuitBreaker("p", failure_threshold=3, cooldown_s=30, clock=FakeClock())
    breaker.record_failure("HTTP 500", severe=False)
    breaker.record_failure("HTTP 500", severe=False)
    assert breaker.state == "closed"
    breaker.record_success()  # a success in between resets the count
    breaker.record_failure("HTTP 500", severe=False)
    breaker.record_failure("HTTP 500", severe=False)
    assert breaker.state == "closed"
    breaker.record_failure("HTTP 500", severe=False)
    assert breaker.state == "open"
    assert breaker.snapshot().consecutive_failures == 3
    assert breaker.snapshot().last_error == "HTTP 500"


def test_half_open_lets_one_probe_through_and_its_verdict_decides() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("p", failure_threshold=3, cooldown_s=10, clock=clock)
    breaker.record_failure("down", severe=True)
    clock.now += 10
    assert breaker.state == "half_open"
    assert breaker.available
    assert breaker.allow()  # the probe
    assert not breaker.allow()  # others keep skipping while it runs
    breaker.record_failure("still down", severe=False)  # a failed probe re-opens at once
    assert breaker.state == "open"
    clock.now += 10
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state == "closed"
    assert breaker.allow() and breaker.allow()


def test_release_frees_the_probe_slot_without_a_verdict() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("p", cooldown_s=5, clock=clock)
    breaker.record_failure("down", severe=True)
    clock.now += 5
    assert breaker.allow()
    breaker.release()  # the caller was cancelled: nothing learned about the provider
    assert breaker.state == "half_open"
    assert breaker.allow()
