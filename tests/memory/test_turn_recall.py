"""The full-text index of messages (kept by the database) and recalled turns in the context:
both backends."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete

from eko.memory.turn_recall import recall_turns, render_recalled
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.message_search import query_words, search_messages
from eko.store.messages import append_message
from eko.store.models import Message

from .conftest import MemoryKit

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


async def _room(database: Database, name: str = "Caroline") -> tuple[str, int]:
    async with database.session() as session:
        user, _ = await user_repo.create_user(session, display_name=name)
        room = await room_repo.create_room(
            session, kind="direct", name="r", persona="eko", created_by=user.id
        )
        return room.id, user.id


async def _say(database: Database, room_id: str, user_id: int, *lines: str) -> None:
    for n, line in enumerate(lines):
        user_turn = n % 2 == 0
        await append_message(
            database,
            room_id=room_id,
            role="user" if user_turn else "assistant",
            content=line,
            dedupe_key=f"{room_id}:{n}:{line[:20]}",
            sender_id=user_id if user_turn else None,
            created_at=T0 + timedelta(minutes=n),
        )


def test_query_words_keep_the_rare_words_folded() -> None:
    assert query_words("Où est-ce que Caroline a fait ses recherches à Besançon ?") == [
        "caroline",
        "recherches",
        "besancon",
    ]
    assert query_words("and the of") == []


async def test_search_finds_by_rare_word_accents_folded_scoped_and_bounded(
    database: Database,
) -> None:
    room_id, user_id = await _room(database)
    other_id, other_user = await _room(database, "Mel")
    await _say(
        database,
        room_id,
        user_id,
        "I went to a support group for adoption agencies yesterday.",
        "That sounds meaningful.",
        "Je suis allée à Besançon pour la conférence.",
        "Super !",
        "The weather is nice today.",
    )
    await _say(database, other_id, other_user, "Adoption agencies are my job at Besançon.")
    async with database.session() as session:
        hits = await search_messages(
            session,
            dialect=database.dialect,
            room_id=room_id,
            query="What did she research about adoption agencies?",
            limit=5,
        )
        accents = await search_messages(
            session, dialect=database.dialect, room_id=room_id, query="besancon", limit=5
        )
        bounded = await search_messages(
            session,
            dialect=database.dialect,
            room_id=room_id,
            query="adoption besançon",
            limit=5,
            before_seq=3,
        )
    assert [h.seq for h in hits][:1] == [1]  # only this room's message, the best first
    assert all(h.seq != 0 for h in hits)
    assert [h.seq for h in accents] == [3]  # "Besançon" found without its accent
    assert [h.seq for h in bounded] == [1]  # nothing from seq 3 on
    # The index follows deletes (a trigger on SQLite, the expression index on PostgreSQL).
    async with database.session() as session:
        await session.execute(delete(Message).where(Message.room_id == room_id, Message.seq == 1))
    async with database.session() as session:
        gone = await search_messages(
            session, dialect=database.dialect, room_id=room_id, query="adoption", limit=5
        )
    assert gone == []


async def test_recalled_turns_come_with_their_neighbours_dates_and_budget(
    database: Database,
) -> None:
    room_id, user_id = await _room(database)
    await _say(
        database,
        room_id,
        user_id,
        "What should I cook tonight?",
        "Maybe a risotto.",
        "I researched adoption agencies last week.",
        "That is a big step, how did it go?",
        "Fine. Also the weather is nice.",
        "Enjoy it!",
    )
    async with database.session() as session:
        recalled = await recall_turns(
            session,
            dialect=database.dialect,
            room_id=room_id,
            query="What did Caroline research?",
            before_seq=None,
            max_chars=2000,
            assistant_name="Eko",
        )
        tiny = await recall_turns(
            session,
            dialect=database.dialect,
            room_id=room_id,
            query="research adoption",
            before_seq=None,
            max_chars=40,
            assistant_name="Eko",
        )
    assert len(recalled) == 1
    text = render_recalled(recalled)
    # The hit with the turn before and after it, dated, the speakers named.
    assert "Caroline: I researched adoption agencies last week." in text
    assert "Eko: Maybe a risotto." in text and "Eko: That is a big step" in text
    assert text.startswith("[2026-05-01 09:02]")  # the date of the matching message
    assert len(tiny) == 1 and len(tiny[0].text) <= 40


async def test_the_context_recalls_old_turns_outside_the_recent_window(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    # Words only here (the turns by meaning: test_turn_index.py).
    kit = kit_factory(recent_turns=2, memory_recall_max_chars=1500, memory_recall_dense_k=0)
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    await kit.say(room, "My sister Mélanie lives in Besançon now.", user=alice)
    await kit.say(room, "Nice city!", role="assistant")
    for i in range(4):
        await kit.say(room, f"Small talk number {i}.", user=alice)
        await kit.say(room, f"Reply {i}.", role="assistant")
    await kit.say(room, "Besançon again: I will visit in June.", user=alice)
    await kit.say(room, "Have fun.", role="assistant")
    current = await kit.say(room, "Where does my sister live, Besancon?", user=alice)

    context = await kit.memory.context.build(
        room=room, user=alice, query=current.content, before_seq=current.seq
    )

    recalled = context.parts.recalled
    assert [turn.first_seq for turn in recalled] == [1]  # the recent window's is not repeated
    assert "## Earlier in This Conversation" in context.text
    assert "Mélanie lives in Besançon" in context.text
    assert context.stats["recalled_turns"] == 1
    off = kit_factory(recent_turns=2, memory_recall_max_chars=0)
    quiet = await off.memory.context.build(
        room=room, user=alice, query=current.content, before_seq=current.seq
    )
    assert quiet.parts.recalled == []
