"""Appending messages: per-room order, character offsets, idempotency under concurrency."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store import messages as message_repo
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.models import Message, User


async def _room(database: Database) -> tuple[int, str]:
    async with database.session() as session:
        user, _ = await user_repo.create_user(session, display_name="u")
        room = await room_repo.create_room(
            session, kind="direct", name="r", persona="eko", created_by=user.id
        )
        return user.id, room.id


async def test_concurrent_appends_get_unique_ordered_seqs(database: Database) -> None:
    user_id, room_id = await _room(database)
    texts = [f"message {i:02d}" for i in range(12)]
    await asyncio.gather(
        *(
            message_repo.append_message(
                database,
                room_id=room_id,
                role="user",
                content=t,
                sender_id=user_id,
                dedupe_key=f"k{i}",
            )
            for i, t in enumerate(texts)
        )
    )
    async with database.session() as session:
        stored = await message_repo.list_messages(session, room_id=room_id, limit=100)
    assert [m.seq for m in stored] == list(range(1, 13))
    assert sorted(m.content for m in stored) == texts
    # char_end is the running total of characters in seq order.
    running = 0
    for message in stored:
        running += message.char_count
        assert message.char_end == running


async def test_concurrent_duplicates_store_one_row(database: Database) -> None:
    _, room_id = await _room(database)
    results = await asyncio.gather(
        *(
            message_repo.append_message(
                database, room_id=room_id, role="assistant", content="same", dedupe_key="reply:x"
            )
            for _ in range(6)
        )
    )
    assert len({message.id for message, _ in results}) == 1
    assert sum(created for _, created in results) == 1
    async with database.session() as session:
        stored = await message_repo.list_messages(session, room_id=room_id, limit=100)
    assert len(stored) == 1


async def test_a_key_stored_meanwhile_returns_that_message_and_undoes_the_side_effect(
    database: Database,
) -> None:
    """`look_first=False`: no look before the insert (a reply under its message's lease).
    When the key was stored meanwhile anyway, the unique key fails the insert, the retry looks
    it up and returns that message; the second call's side effect never lands."""
    user_id, room_id = await _room(database)
    first, created = await message_repo.append_message(
        database, room_id=room_id, role="assistant", content="first", dedupe_key="reply:m1"
    )
    assert created
    side_effects: list[str] = []

    async def counted(session: AsyncSession, message: Message) -> None:
        side_effects.append(message.content)
        await session.execute(
            update(User).where(User.id == user_id).values(free_quota_used=User.free_quota_used + 1)
        )

    again, created = await message_repo.append_message(
        database,
        room_id=room_id,
        role="assistant",
        content="second",
        dedupe_key="reply:m1",
        look_first=False,
        in_same_transaction=counted,
    )
    assert not created and again.id == first.id and again.content == "first"
    assert side_effects == []  # the insert failed before it
    async with database.session() as session:
        stored = await message_repo.list_messages(session, room_id=room_id, limit=10)
        user = await session.get(User, user_id)
    assert [m.content for m in stored] == ["first"]
    assert user is not None and user.free_quota_used == 0


async def test_failed_side_effect_rolls_back_the_message(database: Database) -> None:
    _, room_id = await _room(database)

    async def boom(session: object, message: object) -> None:
        raise RuntimeError("side effect failed")

    with pytest.raises(RuntimeError, match="side effect failed"):
        await message_repo.append_message(
            database,
            room_id=room_id,
            role="user",
            content="x",
            dedupe_key="k",
            in_same_transaction=boom,
        )
    async with database.session() as session:
        assert await message_repo.list_messages(session, room_id=room_id, limit=10) == []


async def test_seqs_of_messages_keeps_the_rooms_own_and_skips_the_rest(database: Database) -> None:
    """Looked up by id alone (eko.store.messages): the room is still checked."""
    user_id, room_id = await _room(database)
    _, other_id = await _room(database)
    appended = [
        await message_repo.append_message(
            database,
            room_id=room_id,
            role="user",
            content=f"m{i}",
            sender_id=user_id,
            dedupe_key=f"mine{i}",
        )
        for i in range(3)
    ]
    mine = [message for message, _created in appended]
    theirs, _ = await message_repo.append_message(
        database,
        room_id=other_id,
        role="user",
        content="elsewhere",
        sender_id=user_id,
        dedupe_key="theirs",
    )
    async with database.session() as session:
        found = await message_repo.seqs_of_messages(
            session,
            room_id=room_id,
            message_ids=[mine[2].id, theirs.id, "no-such-id", mine[0].id, mine[0].id],
        )
        assert found == {mine[2].id: 3, mine[0].id: 1}
        assert await message_repo.seqs_of_messages(session, room_id=room_id, message_ids=[]) == {}
