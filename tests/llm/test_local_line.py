"""The local model's line: a slow call is busy, not down; a call cut by its deadline frees the
model; people are served in arrival order and told their place; waiting in line does not
spend the deadlines."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from eko.llm.deadline import message_deadline, queued, remaining_s, time_limit
from eko.llm.errors import AllProvidersFailed
from eko.llm.priority import PriorityGate
from eko.llm.providers.function import FunctionModel
from eko.llm.providers.local import LocalLlamaProvider
from eko.llm.recording import MemoryRecorder
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage
from eko.llm.waiting import QueuePlace, waiting_turn

from .fake_llama import CHATML, Loader
from .slow_llama import ANSWER, SlowLlama, slow_local
from .test_llama_prefill import EvalLlama

ASK = [ChatMessage("user", "Bonjour")]


async def until(condition: object, tries: int = 400) -> None:
    for _ in range(tries):
        if callable(condition) and condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never met")


async def test_a_local_call_past_its_deadline_leaves_the_circuit_closed(tmp_path: Path) -> None:
    llama = SlowLlama(delay=30)
    runtime = LLMRuntime([slow_local(tmp_path, llama)], MemoryRecorder())

    for _ in range(4):  # past the failure threshold too
        with message_deadline(0.6), pytest.raises(AllProvidersFailed) as caught:
            await runtime.complete(ASK, purpose="writer")
        assert caught.value.timed_out

    assert [b.state for b in runtime.breakers()] == ["closed"]
    await runtime.aclose()


async def test_a_slow_local_model_with_a_fallback_is_not_taken_for_a_dead_one(
    tmp_path: Path,
) -> None:
    # With a fallback waiting, the local model gets half the deadline; running out of it sent
    # every later message straight to the fallback (the circuit opened) — not any more.
    llama = SlowLlama(delay=30)
    backup = FunctionModel.constant("from backup", name="backup")
    runtime = LLMRuntime([slow_local(tmp_path, llama), backup], MemoryRecorder())

    with message_deadline(1.2):
        answer = await runtime.complete(ASK, purpose="writer")

    assert answer.text == "from backup"
    assert [b.state for b in runtime.breakers()] == ["closed", "closed"]
    await runtime.aclose()


async def test_a_call_cut_by_its_deadline_frees_the_model_for_the_next(tmp_path: Path) -> None:
    llama = SlowLlama(delay=60)  # would hold the one model thread for a minute
    provider = slow_local(tmp_path, llama)
    runtime = LLMRuntime([provider], MemoryRecorder())

    with message_deadline(1.0), pytest.raises(AllProvidersFailed):
        await runtime.complete(ASK, purpose="orchestrator")
    llama.delay = 0.1
    # Had the cut generation gone on, this call would wait behind it past its own deadline.
    with message_deadline(20):
        answer = await runtime.complete(ASK, purpose="writer")

    assert answer.text == ANSWER
    assert (llama.stopped, llama.finished) == (1, 1)
    assert not provider.gate.held
    await runtime.aclose()


async def test_people_are_told_their_place_and_served_in_arrival_order() -> None:
    gate = PriorityGate(default_hold_s=10)
    heard: dict[str, list[int]] = {"a": [], "b": [], "c": []}
    served: list[str] = []

    async def person(name: str, ticket: float) -> None:
        def tell(place: QueuePlace) -> None:
            heard[name].append(place.position)

        async with gate.hold("interactive", ticket=ticket, on_place=tell):
            served.append(name)

    await gate.acquire("interactive")  # the call in flight
    c = asyncio.create_task(person("c", ticket=3.0))
    await asyncio.sleep(0)
    a = asyncio.create_task(person("a", ticket=1.0))  # arrived first, asks later
    await asyncio.sleep(0)
    b = asyncio.create_task(person("b", ticket=2.0))
    await asyncio.sleep(0)
    assert gate.waiting("interactive") == 3
    assert gate.estimate_s(3) > gate.estimate_s(1) > 0
    gate.release()
    await asyncio.gather(a, b, c)

    assert served == ["a", "b", "c"]
    assert heard["a"] == [1, 0]
    assert heard["b"] == [2, 1, 0]
    assert heard["c"] == [1, 2, 3, 2, 1, 0]
    assert not gate.held


async def test_waiting_in_line_does_not_spend_the_deadlines() -> None:
    with message_deadline(0.3):
        async with time_limit(0.3) as clock:
            with queued(5.0):
                await asyncio.sleep(0.5)  # longer than both limits
            left = remaining_s()
            assert left is not None and left > 0.1
            await asyncio.sleep(0.05)
    assert clock.paused_s >= 0.5


async def test_past_the_bound_the_limits_fire_as_they_would() -> None:
    with pytest.raises(TimeoutError):
        async with time_limit(0.1):
            with queued(0.2):
                await asyncio.sleep(5)


async def test_a_queued_person_keeps_the_whole_deadline_for_their_turn(tmp_path: Path) -> None:
    llama = SlowLlama(delay=1.0)
    provider = slow_local(tmp_path, llama, queue_wait_s=60)
    runtime = LLMRuntime([provider], MemoryRecorder())
    places: list[QueuePlace] = []

    class Listener:
        def queued(self, place: QueuePlace) -> None:
            places.append(place)

    first = asyncio.create_task(runtime.complete(ASK, purpose="writer"))
    await until(lambda: provider.gate.held)
    # 0.8 s of deadline: less than the call ahead of it, enough for its own.
    llama.delay = 0.2
    with message_deadline(0.8), waiting_turn(Listener()):
        async with time_limit(0.8):
            second = await runtime.complete(ASK, purpose="writer")

    assert (await first).text == second.text == ANSWER
    assert [p.position for p in places] == [1, 0]
    assert places[0].estimate_s > 0
    await runtime.aclose()


async def test_past_the_queue_bound_a_person_gets_the_deadline_error(tmp_path: Path) -> None:
    llama = SlowLlama(delay=3.0)
    provider = slow_local(tmp_path, llama, queue_wait_s=0.2)
    runtime = LLMRuntime([provider], MemoryRecorder())

    first = asyncio.create_task(runtime.complete(ASK, purpose="writer"))
    await until(lambda: provider.gate.held)
    with message_deadline(1.0), pytest.raises(AllProvidersFailed):
        await runtime.complete(ASK, purpose="writer")

    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    await runtime.aclose()


async def test_a_long_prompt_cut_by_its_deadline_stops_being_read(tmp_path: Path) -> None:
    # 10 ms per token: ~10 s to read this person's prompt at once, which nothing could stop.
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    llama = EvalLlama(seconds_per_token=0.01, chat_template=CHATML)
    provider = LocalLlamaProvider(
        gguf, loader=Loader(llama), prefill_chunk=25, prompt_style="template"
    )
    runtime = LLMRuntime([provider], MemoryRecorder())
    await provider.load()

    with message_deadline(1.0), pytest.raises(AllProvidersFailed):
        await runtime.complete([ChatMessage("user", "x" * 1000)], purpose="orchestrator")
    await runtime.complete(ASK, purpose="writer")

    # Read a chunk (100 tokens) at a time, it stopped once its caller gave up: the next
    # person's generation is the only one that ran, and the long prompt was not read through.
    assert len(llama.calls) == 1 and "Bonjour" in llama.text_of(llama.calls[0][0])
    cut_prompt_read = sum(n for start, n in llama.evals[:-1])
    assert 0 < cut_prompt_read < 1000
    await runtime.aclose()
