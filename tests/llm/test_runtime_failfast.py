"""The runtime fails fast: breakers skip known-down providers, one deadline bounds every call."""

from __future__ import annotations

import asyncio

import pytest

from eko.llm.deadline import message_deadline, remaining_s
from eko.llm.errors import AllProvidersFailed, ProviderHTTPError, ProviderTimeout
from eko.llm.providers.function import FunctionModel
from eko.llm.recording import MemoryRecorder
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage, ProviderRequest

ASK = [ChatMessage("user", "hi")]


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def timing_out(name: str) -> FunctionModel:
    def fail(_request: ProviderRequest) -> str:
        raise ProviderTimeout(name, "ReadTimeout: no answer in time")

    return FunctionModel(fail, name=name)


async def test_a_timeout_opens_the_circuit_and_later_calls_skip_the_provider() -> None:
    clock = FakeClock()
    primary = timing_out("primary")
    backup = FunctionModel.constant("from backup", name="backup")
    recorder = MemoryRecorder()
    runtime = LLMRuntime([primary, backup], recorder, breaker_cooldown_s=30, clock=clock)

    first = await runtime.complete(ASK, purpose="writer")
    second = await runtime.complete(ASK, purpose="writer")

    assert first.text == second.text == "from backup"
    assert len(primary.requests) == 1  # the second call never waited on it
    assert [b.state for b in runtime.breakers()] == ["open", "closed"]
    assert [(r.provider, r.outcome) for r in recorder.records] == [
        ("primary", "error"),
        ("backup", "fallback"),
        ("backup", "fallback"),
    ]
    assert runtime.any_available

    clock.now += 30  # cooldown over: one probe goes to the primary again
    await runtime.complete(ASK, purpose="writer")
    assert len(primary.requests) == 2
    assert runtime.breakers()[0].state == "open"  # the probe failed: open again


async def test_a_recovered_provider_closes_its_circuit_on_the_probe() -> None:
    clock = FakeClock()
    primary = FunctionModel.scripted(ProviderTimeout("primary", "slow"), "back", name="primary")
    backup = FunctionModel.constant("from backup", name="backup")
    runtime = LLMRuntime([primary, backup], breaker_cooldown_s=5, clock=clock)
    await runtime.complete(ASK, purpose="writer")
    clock.now += 5
    answer = await runtime.complete(ASK, purpose="writer")
    assert answer.provider == "primary"
    assert runtime.breakers()[0].state == "closed"


async def test_http_errors_open_the_circuit_only_after_the_threshold() -> None:
    def server_error(_request: ProviderRequest) -> str:
        raise ProviderHTTPError("primary", 502, "bad gateway")

    primary = FunctionModel(server_error, name="primary")
    backup = FunctionModel.constant("ok", name="backup")
    runtime = LLMRuntime([primary, backup], breaker_failures=2)
    await runtime.complete(ASK, purpose="writer")
    assert runtime.breakers()[0].state == "closed"
    await runtime.complete(ASK, purpose="writer")
    assert runtime.breakers()[0].state == "open"
    await runtime.complete(ASK, purpose="writer")
    assert len(primary.requests) == 2


async def test_every_provider_down_fails_at_once_without_calling_anyone() -> None:
    only = timing_out("only")
    runtime = LLMRuntime([only])
    with pytest.raises(AllProvidersFailed):
        await runtime.complete(ASK, purpose="writer")
    assert not runtime.any_available
    with pytest.raises(AllProvidersFailed) as caught:
        await runtime.complete(ASK, purpose="summary_l1")
    assert caught.value.attempts == ()
    assert caught.value.skipped == ("only",)
    assert len(only.requests) == 1


async def test_a_hung_primary_gets_half_the_deadline_and_the_fallback_answers() -> None:
    async def hang(_request: ProviderRequest) -> str:
        await asyncio.sleep(3600)
        return "never"

    primary = FunctionModel(hang, name="primary")
    backup = FunctionModel.constant("from backup", name="backup")
    recorder = MemoryRecorder()
    runtime = LLMRuntime([primary, backup], recorder)
    with message_deadline(2.0):
        answer = await runtime.complete(ASK, purpose="writer")
        left = remaining_s()
    assert answer.text == "from backup"
    assert left is not None and left > 0.5  # the backup had the other half
    primary_attempt = recorder.records[0]
    assert primary_attempt.outcome == "error"
    assert "deadline" in (primary_attempt.error or "")


async def test_a_spent_deadline_stops_before_calling_and_says_it_timed_out() -> None:
    model = FunctionModel.constant("late", name="only")
    runtime = LLMRuntime([model])
    with message_deadline(0.0), pytest.raises(AllProvidersFailed) as caught:
        await runtime.complete(ASK, purpose="writer")
    assert caught.value.timed_out
    assert model.requests == []
    # No verdict on the provider: it was never asked.
    assert runtime.breakers()[0].state == "closed"


async def test_nested_deadlines_keep_the_earlier_one() -> None:
    with message_deadline(10.0):
        with message_deadline(100.0):
            inner = remaining_s()
        assert inner is not None and inner <= 10.0
    assert remaining_s() is None
