"""What opens a provider's circuit (issue #32): a provider that keeps answering garbage opens
it; one connection error of the only provider does not turn the next 30 s into apologies."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from eko.llm.errors import AllProvidersFailed
from eko.llm.providers import FunctionModel
from eko.llm.providers.openai_compat import OpenAICompatProvider
from eko.llm.recording import MemoryRecorder
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage

ASK = [ChatMessage("user", "hi")]
Handler = Callable[[httpx.Request], httpx.Response]


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def remote(handler: Handler, name: str = "remote") -> tuple[OpenAICompatProvider, list[int]]:
    """An OpenAI-compatible provider over a scripted transport, and the count of its calls."""
    calls: list[int] = []

    def counted(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return handler(request)

    provider = OpenAICompatProvider(
        base_url="http://gateway.test/v1",
        model="m",
        name=name,
        transport=httpx.MockTransport(counted),
    )
    return provider, calls


def answer(content: str) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "model": "m",
            "choices": [{"message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2},
        },
    )


GARBAGE: dict[str, Handler] = {
    "not_json": lambda _r: httpx.Response(200, text="<html>502 from a proxy</html>"),
    "no_choices": lambda _r: httpx.Response(200, json={"model": "m", "choices": []}),
    "empty_answer": lambda _r: answer(""),
}


@pytest.mark.parametrize("garbage", sorted(GARBAGE))
async def test_a_provider_that_keeps_answering_garbage_opens_its_circuit(garbage: str) -> None:
    primary, calls = remote(GARBAGE[garbage], name="primary")
    backup = FunctionModel.constant("from backup", name="backup")
    recorder = MemoryRecorder()
    runtime = LLMRuntime([primary, backup], recorder, breaker_failures=3)
    for _ in range(5):
        assert (await runtime.complete(ASK, purpose="writer")).text == "from backup"
    # Three garbage answers in a row: open; the next calls go straight to the backup.
    assert len(calls) == 3
    snapshot = runtime.breakers()[0]
    assert snapshot.state == "open" and snapshot.consecutive_failures == 3
    assert [r.outcome for r in recorder.records if r.provider == "primary"] == ["invalid"] * 3


async def test_a_good_answer_between_garbage_keeps_the_circuit_closed() -> None:
    replies = iter(["", "fine", "", "", "fine", ""])
    primary, calls = remote(lambda _r: answer(next(replies)), name="primary")
    backup = FunctionModel.constant("from backup", name="backup")
    runtime = LLMRuntime([primary, backup], breaker_failures=3)
    for _ in range(6):
        await runtime.complete(ASK, purpose="writer")
    assert len(calls) == 6
    assert runtime.breakers()[0].state == "closed"


async def test_one_connection_error_of_the_only_provider_does_not_silence_it() -> None:
    clock = FakeClock()
    script = iter(["refused", "ok", "ok"])

    def flaky(request: httpx.Request) -> httpx.Response:
        if next(script) == "refused":
            raise httpx.ConnectError("connection refused", request=request)
        return answer("back again")

    only, calls = remote(flaky, name="only")
    runtime = LLMRuntime([only], breaker_cooldown_s=30, clock=clock)
    with pytest.raises(AllProvidersFailed):
        await runtime.complete(ASK, purpose="writer")
    assert runtime.breakers()[0].state == "closed"
    assert runtime.any_available
    # The next message, a second later: asked again, and answered.
    clock.now += 1
    assert (await runtime.complete(ASK, purpose="writer")).text == "back again"
    assert len(calls) == 2


async def test_the_only_provider_down_for_good_opens_after_the_threshold() -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    only, calls = remote(refused, name="only")
    runtime = LLMRuntime([only], breaker_failures=3)
    for _ in range(3):
        with pytest.raises(AllProvidersFailed):
            await runtime.complete(ASK, purpose="writer")
    assert runtime.breakers()[0].state == "open"
    with pytest.raises(AllProvidersFailed) as caught:
        await runtime.complete(ASK, purpose="writer")
    assert caught.value.skipped == ("only",)
    assert len(calls) == 3


async def test_a_connection_error_with_a_fallback_still_opens_at_once() -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    primary, calls = remote(refused, name="primary")
    backup = FunctionModel.constant("from backup", name="backup")
    runtime = LLMRuntime([primary, backup], breaker_failures=3)
    for _ in range(3):
        assert (await runtime.complete(ASK, purpose="writer")).text == "from backup"
    assert len(calls) == 1
    assert runtime.breakers()[0].state == "open"
