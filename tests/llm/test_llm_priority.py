"""PriorityGate, and the local provider serving a person before queued background work."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from eko.llm.priority import PriorityGate
from eko.llm.providers.local import LocalLlamaProvider
from eko.llm.types import ChatMessage, Priority, ProviderRequest

from .fake_llama import FakeLlama, Loader


async def test_a_free_gate_is_taken_at_once() -> None:
    gate = PriorityGate()
    async with gate.hold("background"):
        assert gate.held
    assert not gate.held


async def test_interactive_waiters_go_before_background_ones_fifo_within() -> None:
    gate = PriorityGate()
    order: list[str] = []

    async def user(label: str, priority: Priority) -> None:
        async with gate.hold(priority):
            order.append(label)

    await gate.acquire("background")  # the call in flight
    tasks = [
        asyncio.create_task(user("bg1", "background")),
        asyncio.create_task(user("bg2", "background")),
        asyncio.create_task(user("person1", "interactive")),
        asyncio.create_task(user("bg3", "background")),
        asyncio.create_task(user("person2", "interactive")),
    ]
    await asyncio.sleep(0)
    assert (gate.waiting("interactive"), gate.waiting("background")) == (2, 3)
    gate.release()
    await asyncio.gather(*tasks)

    assert order == ["person1", "person2", "bg1", "bg2", "bg3"]
    assert not gate.held


async def test_a_cancelled_waiter_leaves_the_queue() -> None:
    gate = PriorityGate()
    await gate.acquire("interactive")
    waiter = asyncio.create_task(gate.acquire("interactive"))
    later: list[str] = []

    async def background() -> None:
        async with gate.hold("background"):
            later.append("bg")

    bg = asyncio.create_task(background())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    gate.release()
    await bg
    assert later == ["bg"] and not gate.held


async def test_a_waiter_cancelled_after_being_handed_the_gate_passes_it_on() -> None:
    gate = PriorityGate()
    await gate.acquire("interactive")
    handed = asyncio.create_task(gate.acquire("interactive"))
    other = asyncio.create_task(gate.acquire("background"))
    await asyncio.sleep(0)
    gate.release()  # hands the gate to `handed`...
    handed.cancel()  # ...which is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await handed
    await asyncio.wait_for(other, 1)  # the gate went on to the next waiter
    assert gate.held
    gate.release()
    assert not gate.held


def test_release_without_hold_is_an_error() -> None:
    with pytest.raises(RuntimeError):
        PriorityGate().release()


def request(text: str, priority: Priority) -> ProviderRequest:
    return ProviderRequest(messages=(ChatMessage("user", text),), priority=priority)


async def test_a_person_does_not_wait_for_the_background_call_in_flight(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    llama = FakeLlama(delay=0.3)
    provider = LocalLlamaProvider(gguf, loader=Loader(llama))
    await provider.load()

    backlog = [
        asyncio.create_task(provider.generate(request(f"summary {n}", "background")))
        for n in range(3)
    ]
    await asyncio.sleep(0.05)  # summary 0 is running, 1-2 are queued
    person = asyncio.create_task(provider.generate(request("hello", "interactive")))
    began = asyncio.get_running_loop().time()
    await person
    waited = asyncio.get_running_loop().time() - began
    results = await asyncio.gather(*backlog)

    ran = [prompt.splitlines()[0] for prompt, _ in llama.calls]
    # summary 0 stopped at its next token, the person went, then summary 0 ran again.
    assert ran == ["User: summary 0", "User: hello", *(f"User: summary {n}" for n in (0, 1, 2))]
    assert waited < 0.3 + 0.25  # its own call, not the rest of summary 0's
    # The preempted generation's partial text is never returned: each gets a whole answer.
    assert all(r.text != "cancel" for r in results)
    assert llama.max_active == 1
    await provider.aclose()


async def test_background_work_gives_way_a_bounded_number_of_times(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    llama = FakeLlama(delay=0.2)
    provider = LocalLlamaProvider(gguf, loader=Loader(llama))
    await provider.load()
    summary = asyncio.create_task(provider.generate(request("summary", "background")))
    for n in range(5):  # a person arrives each time the summary has just restarted
        await asyncio.sleep(0.05)
        await provider.generate(request(f"hello {n}", "interactive"))
    await summary
    ran = [prompt.splitlines()[0] for prompt, _ in llama.calls]
    # Preempted 3 times, then it ran to its end with hello 3 waiting behind it.
    s, h = "User: summary", "User: hello"
    assert ran == [s, f"{h} 0", s, f"{h} 1", s, f"{h} 2", s, f"{h} 3", f"{h} 4"]
    await provider.aclose()


async def test_only_a_higher_priority_waiter_preempts_and_only_once() -> None:
    gate = PriorityGate()
    calls: list[str] = []
    async with gate.hold("background", on_preempt=lambda: calls.append("preempt")) as lease:
        other_background = asyncio.create_task(gate.acquire("background"))
        await asyncio.sleep(0)
        assert calls == [] and not lease.preempted
        people = [asyncio.create_task(gate.acquire("interactive")) for _ in range(2)]
        await asyncio.sleep(0)
        assert calls == ["preempt"] and lease.preempted
    for task in people:
        await task
        gate.release()
    await other_background
    gate.release()
    assert not gate.held


async def test_runtime_passes_the_priority_to_the_provider() -> None:
    from eko.llm.providers.function import FunctionModel
    from eko.llm.runtime import LLMRuntime

    seen: list[Priority] = []

    def answer(request: ProviderRequest) -> str:
        seen.append(request.priority)
        return "ok"

    runtime = LLMRuntime([FunctionModel(answer)])
    await runtime.complete([ChatMessage("user", "x")], purpose="t")
    await runtime.complete([ChatMessage("user", "x")], purpose="t", priority="background")
    assert seen == ["interactive", "background"]
