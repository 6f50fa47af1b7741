"""The reflection flow with a scripted model, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from eko.lobby import store
from eko.store.db import Database, PoolLimits
from eko.store.memory_models import MemoryItem
from eko.store.models import LLMCall, Message
from tests.lobby.kit import ScriptedReflection, make_lobby_kit


async def test_a_reflection_poses_the_most_recent_goal(database: Database) -> None:
    kit = await make_lobby_kit(database)
    await kit.goal("Kraken FM", "C'est quoi exactement Kraken FM ?")
    kit.clock.advance(minutes=1)
    corentin = await kit.goal("Corentin", "Qui est Corentin ?")
    await kit.remember("fact", "Corentin", "Corentin travaille avec David sur lemapp")
    await kit.say("je vais bosser sur le deploy de lemapp", user=1)

    reflection = await kit.reflector.reflect(kit.room.id)

    assert reflection.action == "message" and reflection.goal_id == corentin
    assert reflection.message == "Au fait, Qui est Corentin ?"
    assert reflection.goals_count == 2 and reflection.facts_count == 1
    assert reflection.model_calls == 1 and reflection.llm_tokens > 0
    assert reflection.tone == "playful"
    prompt = kit.script.prompts[0]
    assert "Corentin travaille avec David" in prompt and "user1: je vais bosser" in prompt
    assert "POSE CETTE QUESTION" in prompt
    async with database.session() as session:
        posted = (
            await session.execute(select(Message).where(Message.role == "assistant"))
        ).scalar_one()
        goal = await session.get(MemoryItem, corentin)
        calls = (await session.execute(select(LLMCall.purpose))).scalars().all()
        stats = await store.get_stats(session, room_id=kit.room.id)
    assert posted.content == reflection.message and posted.meta["proactive"] is True
    assert goal is not None and goal.status == "asked"
    assert calls == ["reflection"]
    assert stats is not None and (stats.total, stats.message_count, stats.pass_count) == (1, 1, 0)
    assert stats.last_message_at == kit.clock.now and stats.pending_goal_id == corentin
    phases = [e.data["phase"] for e in kit.bus.events if e.type == "reflection:phase"]
    assert phases == ["gathering", "context", "thinking", "done"]
    update = next(e for e in kit.bus.events if e.type == "reflection:update")
    assert update.data["stats"]["message_count"] == 1
    assert update.data["latest"]["goal_id"] == corentin
    assert "message.created" in kit.bus.types()


async def test_last_message_from_the_assistant_costs_zero_model_calls(database: Database) -> None:
    kit = await make_lobby_kit(database)
    await kit.goal("Corentin", "Qui est Corentin ?")
    await kit.say("Bonjour à tous", role="assistant")

    skipped = await kit.reflector.reflect(kit.room.id)
    manual = await kit.reflector.reflect(kit.room.id, trigger="manual")

    assert (skipped.action, skipped.skipped, skipped.model_calls) == (
        "pass",
        "last_message_is_assistant",
        0,
    )
    assert manual.skipped == "last_message_is_assistant"
    assert kit.script.calls == 0
    forced = await kit.reflector.reflect(kit.room.id, trigger="manual", force=True)
    assert forced.action == "message" and kit.script.calls == 1


async def test_rate_limited_and_no_goal_cost_no_model_call(database: Database) -> None:
    kit = await make_lobby_kit(database)
    await kit.goal("Corentin", "Qui est Corentin ?")
    await kit.goal("Simon", "Qui est Simon exactement ?")
    await kit.say("salut", user=1)
    assert (await kit.reflector.reflect(kit.room.id)).action == "message"
    await kit.say("hello", user=1)
    kit.clock.advance(minutes=10)
    limited = await kit.reflector.reflect(kit.room.id)
    assert limited.rate_limited and limited.model_calls == 0
    # A manual trigger bypasses the rate limits.
    assert (await kit.reflector.reflect(kit.room.id, trigger="manual")).action == "message"
    await kit.say("et maintenant ?", user=1)
    kit.clock.advance(hours=1)
    empty = await kit.reflector.reflect(kit.room.id)
    assert empty.skipped == "no_goal" and empty.model_calls == 0
    assert kit.script.calls == 2
    async with database.session() as session:
        stats = await store.get_stats(session, room_id=kit.room.id)
    assert stats is not None
    assert (stats.total, stats.message_count, stats.pass_count, stats.rate_limited_count) == (
        4,
        2,
        2,
        1,
    )
    # The no-goal pass gave its slot back, and the manual one is not counted in the day's
    # budget: one intervention counted today.
    assert stats.day_count == 1


async def test_a_pass_or_a_failing_model_gives_the_slot_back(database: Database) -> None:
    kit = await make_lobby_kit(database, script=ScriptedReflection(action="pass"))
    await kit.goal("Corentin", "Qui est Corentin ?")
    await kit.say("salut", user=1)
    passed = await kit.reflector.reflect(kit.room.id)
    assert passed.action == "pass" and passed.model_calls == 1
    async with database.session() as session:
        stats = await store.get_stats(session, room_id=kit.room.id)
    assert stats is not None and stats.day_count == 0 and stats.next_allowed_at is None

    def broken(_request: object) -> str:
        return "not json at all"

    kit2 = await make_lobby_kit(database, model=broken)
    await kit2.goal("Corentin", "Qui est Corentin ?")
    await kit2.say("salut", user=1)
    failed = await kit2.reflector.reflect(kit2.room.id)
    assert failed.action == "pass" and failed.reason.startswith("model call failed")
    async with database.session() as session:
        stats = await store.get_stats(session, room_id=kit2.room.id)
    assert stats is not None and stats.day_count == 0


async def test_duplicate_goals_are_removed_during_reflection(database: Database) -> None:
    kit = await make_lobby_kit(database)
    first = await kit.goal("Corentin", "Qui est Corentin ?")
    kit.clock.advance(minutes=1)
    other = await kit.goal("corentin", "Corentin, c'est qui au juste ?")
    await kit.say("salut", user=1)
    reflection = await kit.reflector.reflect(kit.room.id)
    assert reflection.goal_id is not None
    assert set(reflection.duplicate_goal_ids) | {reflection.goal_id} == {first, other}
    assert await kit.items.get(reflection.duplicate_goal_ids[0]) is None


async def test_100_concurrent_scheduled_reflections_post_once(database: Database) -> None:
    # 100 at once wait for one of the pool's connections (on a loaded machine, longer than the
    # default 10 s) instead of failing: what is under test is that one of them posts.
    patient = Database(database.url, pool=PoolLimits(timeout_s=120))
    try:
        await _hundred_reflections_post_once(patient)
    finally:
        await patient.dispose()


async def _hundred_reflections_post_once(database: Database) -> None:
    kit = await make_lobby_kit(database)
    for i in range(3):
        await kit.goal(f"sujet {i}", f"C'est quoi le sujet {i} ?")
    await kit.say("salut", user=1)
    results = await asyncio.gather(*(kit.reflector.reflect(kit.room.id) for _ in range(100)))
    assert sum(r.action == "message" for r in results) == 1
    # The others were refused a slot (or, once the question is posted, see it as the last
    # message): none of them called the model.
    assert all(
        r.skipped in ("rate_limited", "last_message_is_assistant")
        for r in results
        if r.action != "message"
    )
    assert kit.script.calls == 1
    async with database.session() as session:
        stats = await store.get_stats(session, room_id=kit.room.id)
    assert stats is not None and stats.total == 100 and stats.message_count == 1


async def test_concurrent_manual_triggers_post_once(database: Database) -> None:
    kit = await make_lobby_kit(database)
    await kit.goal("Corentin", "Qui est Corentin ?")
    await kit.say("salut", user=1)
    results = await asyncio.gather(
        *(kit.reflector.reflect(kit.room.id, trigger="manual") for _ in range(20))
    )
    assert sum(r.action == "message" for r in results) == 1
    assert {r.skipped for r in results if r.action != "message"} <= {
        "in_progress",
        "last_message_is_assistant",
        "no_goal",  # came after the question was posted (the goal is asked now)
    }
    assert not any(r.rate_limited for r in results)
