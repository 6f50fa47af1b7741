"""The context loader's minimum block, on both backends."""

from __future__ import annotations

from eko.chat.engine.capabilities import load_catalog
from eko.chat.engine.context_loader import ContextLoader
from eko.chat.pipeline import Turn
from eko.config import Settings
from eko.store import chat_profile
from eko.store import messages as message_repo
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database


async def test_minimum_block(database: Database) -> None:
    # The recent window is counted in turns (a message and its answer): 3 turns = 6 messages.
    settings = Settings(database_url=database.url, _env_file=None, recent_turns=3)
    async with database.session() as session:
        user, _ = await user_repo.create_user(
            session,
            display_name="Marie Curie",
            settings={"locale_main": "fr-FR", "timezone": "Europe/Paris"},
        )
        room = await room_repo.create_room(
            session, kind="direct", name="r", persona="eko", created_by=user.id
        )
        await chat_profile.upsert_fact(
            session,
            user_id=user.id,
            fact_key="first_name",
            value="Marie",
            confidence=0.9,
            source_ref="api",
        )
        await chat_profile.upsert_fact(
            session, user_id=user.id, fact_key="main_city", value="Paris", is_estimated=True
        )
        await chat_profile.upsert_fact(
            session, user_id=user.id, fact_key="pet", value="cat", category="life"
        )
        await chat_profile.set_agent(session, user_id=user.id, agent_type="ultimate", active=True)
        await chat_profile.set_service(session, user_id=user.id, service="email", connected=False)
        user.free_quota_used = 12
    for i in range(14):
        role = "user" if i % 2 == 0 else "assistant"
        meta = {"intent": "decision_support", "mode": "normal"} if role == "assistant" else {}
        message, _ = await message_repo.append_message(
            database,
            room_id=room.id,
            role=role,
            content=f"m{i}",
            dedupe_key=f"k{i}",
            sender_id=user.id if role == "user" else None,
            meta=meta,
        )
    current = message  # the last one is an assistant message: answer the one before it
    async with database.session() as session:
        last_user = await message_repo.get_by_dedupe_key(session, dedupe_key="k12")
    assert last_user is not None and current.role == "assistant"

    loader = ContextLoader(database=database, settings=settings, catalog=load_catalog())
    ctx = await loader.load(Turn(user=user, room=room, user_message=last_user))
    block = ctx.minimum_block()

    assert block["user_profile"]["first_name"] == "Marie"
    assert block["user_profile"]["public_user_id"] == user.public_id
    assert block["settings"]["locale_main"] == "fr-FR"
    assert block["settings"]["main_city"] == "Paris"
    assert (
        block["user_status"]["state"] == "blocked" and block["user_status"]["free_quota_used"] == 12
    )
    messages = block["history"]["messages"]
    # The last 3 turns before the message, then the message itself, in order.
    assert [m["content"] for m in messages] == [f"m{i}" for i in range(6, 13)]
    assert {m["role"] for m in messages} == {"user", "assistant"}
    facts = block["user_facts"]
    assert facts["known"] == {"first_name": "Marie", "main_city": "Paris"}
    assert facts["missing_required"] == ["use_tu_form", "main_activity"]
    assert facts["missing_required_count"] == 2
    assert block["gates"]["smalltalk_intro_eligible"] is False  # quota used up
    store = ctx.facts_store()
    assert store["count"] == 3 and store["keys"] == ["first_name", "main_city", "pet"]
    by_key = {item["fact_key"]: item for item in store["items"]}
    assert by_key["main_city"]["is_estimated"] is True
    assert by_key["pet"]["category"] == "life" and by_key["first_name"]["confidence"] == 0.9
    assert ctx.last_intent == "decision_support" and ctx.last_mode == "normal"
    # ultimate is active, but its action capability needs a connected service
    assert ctx.capabilities.flags["can_action_request"] is False
    assert ctx.capabilities.flags["can_deep_work"] is True

    extended = await loader.extended_history(ctx, room_id=room.id, level="medium")
    assert [m.content for m in extended] == [f"m{i}" for i in range(6)]
    assert await loader.extended_history(ctx, room_id=room.id, level="light") == []
