"""Summaries under failure (both backends): a model that fails midway, a crash inside the
write, two builders racing, a hook that waits before retrying, a clash that stops the run."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import func, select

from eko.llm.errors import ProviderHTTPError
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.store.models import Embedding

from .conftest import MemoryKit, Summarizer
from .summary_kit import EVERY, expected_ranges, fill, ranges


async def test_a_model_failure_midway_leaves_no_gap_and_no_duplicate(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    summarizer = Summarizer()
    failing_on = {5}

    def flaky(request: ProviderRequest) -> str:
        if summarizer.calls + 1 in failing_on:
            failing_on.clear()
            summarizer.calls += 1
            raise ProviderHTTPError("function", 500, "the model fell over")
        return summarizer(request)

    kit = kit_factory([FunctionModel(flaky)], summarize_every_n_chars=EVERY)
    alice = await kit.user("alice")
    room = await kit.room(alice)
    await fill(kit, room, alice, 29)

    first = await kit.memory.summaries.catch_up(room.id)
    stored_after_failure = await ranges(kit, room.id)
    second = await kit.memory.summaries.catch_up(room.id)

    assert first.stopped is not None and "model failed" in first.stopped
    # Made before the failure: L1 0-300, 300-600, 600-900, L2 0-900; L1 900-1200 failed.
    assert stored_after_failure == [(1, 0, 300), (1, 300, 600), (1, 600, 900), (2, 0, 900)]
    assert second.stopped is None
    assert await ranges(kit, room.id) == expected_ranges(2900)


async def test_a_crash_inside_the_write_leaves_nothing_half_written(
    database: Any, kit_factory: Callable[..., MemoryKit]
) -> None:
    kit = kit_factory([FunctionModel(Summarizer())], summarize_every_n_chars=EVERY)
    alice = await kit.user("alice")
    room = await kit.room(alice)
    await fill(kit, room, alice, 29)
    upserts = 0
    real_upsert = kit.vectors.upsert

    async def crashing_upsert(session: Any, **kwargs: Any) -> int:
        nonlocal upserts
        if kwargs["collection"] == "summary":
            upserts += 1
            if upserts == 3:
                raise RuntimeError("power cut")  # after the summary row was flushed
        return await real_upsert(session, **kwargs)

    kit.vectors.upsert = crashing_upsert  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="power cut"):
        await kit.memory.summaries.catch_up(room.id)
    kit.vectors.upsert = real_upsert  # type: ignore[method-assign]

    assert await ranges(kit, room.id) == [(1, 0, 300), (1, 300, 600)]
    async with kit.database.session() as session:
        orphans = (
            await session.execute(
                select(func.count()).select_from(Embedding).where(Embedding.collection == "summary")
            )
        ).scalar_one()
    assert orphans == 2
    await kit.memory.summaries.catch_up(room.id)
    assert await ranges(kit, room.id) == expected_ranges(2900)


async def test_two_builders_racing_make_each_summary_once(
    database: Any, kit_factory: Callable[..., MemoryKit]
) -> None:
    first = kit_factory([FunctionModel(Summarizer())], summarize_every_n_chars=EVERY)
    # A second worker: its own builder and its own in-process lock, the same database.
    second = kit_factory([FunctionModel(Summarizer())], summarize_every_n_chars=EVERY)
    alice = await first.user("alice")
    room = await first.room(alice)
    await fill(first, room, alice, 29)

    results = await asyncio.gather(
        first.memory.summaries.catch_up(room.id), second.memory.summaries.catch_up(room.id)
    )

    assert await ranges(first, room.id) == expected_ranges(2900)
    assert sum(len(r.created) for r in results) == 13


async def test_after_a_failure_the_hook_waits_before_retrying(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    from dataclasses import dataclass

    from eko.memory.summaries.builder import SummaryHook

    @dataclass(frozen=True)
    class FakeTurn:
        user: Any
        room: Any
        user_message: Any

    model = FunctionModel.scripted(
        ProviderHTTPError("function", 503, "down"),
        json.dumps({"conversation_summary": "c", "actions_summary": "a", "topics": []}),
    )
    kit = kit_factory([model], summarize_every_n_chars=EVERY, summary_retry_after_s=3600)
    alice = await kit.user("alice")
    room = await kit.room(alice)
    await fill(kit, room, alice, 3)
    hook = SummaryHook(kit.memory.summaries)
    turn = FakeTurn(alice, room, None)

    await hook.after(turn, None)  # type: ignore[arg-type]
    await hook.after(turn, None)  # type: ignore[arg-type]
    assert len(model.requests) == 1  # the second reply did not hammer the failing model
    assert await ranges(kit, room.id) == []

    result = await kit.memory.summaries.catch_up(room.id)  # `eko summaries build` does not wait
    assert result.by_level() == {1: 1} and not kit.memory.summaries.backing_off(room.id)


async def test_another_clash_while_writing_stops_the_run_instead_of_looping(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    from sqlalchemy.exc import IntegrityError

    model = FunctionModel(Summarizer())
    kit = kit_factory([model], summarize_every_n_chars=EVERY)
    alice = await kit.user("alice")
    room = await kit.room(alice)
    await fill(kit, room, alice, 3)
    topics = kit.memory.topics
    real_link = topics.link_names

    async def clashing(*args: Any, **kwargs: Any) -> Any:
        raise IntegrityError("INSERT INTO topics", {}, Exception("uq_topics_scope_name"))

    topics.link_names = clashing  # type: ignore[method-assign]
    failed = await kit.memory.summaries.catch_up(room.id)
    topics.link_names = real_link  # type: ignore[method-assign]
    retried = await kit.memory.summaries.catch_up(room.id)

    assert failed.stopped is not None and failed.stopped.startswith("write failed")
    assert failed.model_calls == 1  # one call, not a loop
    assert retried.by_level() == {1: 1}
