"""The full-text index of turns is kept by the database (insert, edit, delete), and PostgreSQL
ranks from the stored vectors (migration 0009), never recomputing or scanning the room."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import delete, event, func, insert, select, text, update

from eko.store.message_search import search_messages
from eko.store.models import Message, Room, User

from .conftest import MemoryKit
from .test_context_scale import _explain


async def _found(kit: MemoryKit, room_id: str, query: str) -> list[int]:
    async with kit.database.session() as session:
        hits = await search_messages(
            session, dialect=kit.database.dialect, room_id=room_id, query=query, limit=12
        )
    return [hit.seq for hit in hits]


async def _search_statements(
    kit: MemoryKit, room_id: str, query: str
) -> tuple[list[int], list[tuple[str, Any]]]:
    """The search's hits and the statements it sent to message_fts, with their parameters."""
    statements: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if "FROM message_fts" in statement:
            statements.append((statement, parameters))

    event.listen(kit.database.engine.sync_engine, "before_cursor_execute", capture)
    try:
        found = await _found(kit, room_id, query)
    finally:
        event.remove(kit.database.engine.sync_engine, "before_cursor_execute", capture)
    return found, statements


async def test_inserts_edits_and_deletes_reach_the_full_text_index(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory()
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    other = await kit.room(alice)
    first = await kit.say(room, "Nous sommes allées à Besançon pour le festival.", user=alice)
    await kit.say(room, "Le festival était bondé.", role="assistant")
    await kit.say(other, "Besançon aussi, dans une autre pièce.", user=alice)

    assert await _found(kit, room.id, "besancon ?") == [1]  # accents folded, room-scoped
    assert sorted(await _found(kit, room.id, "festiv bondé")) == [1, 2]  # word prefixes

    async with kit.database.session() as session:
        await session.execute(
            update(Message).where(Message.id == first.id).values(content="Direction Grenoble.")
        )
        await session.commit()
    assert await _found(kit, room.id, "Besançon") == []
    assert await _found(kit, room.id, "grenoble") == [1]

    async with kit.database.session() as session:
        await session.execute(delete(Room).where(Room.id == room.id))
        await session.commit()
    assert await _found(kit, room.id, "grenoble festival") == []
    assert await _found(kit, other.id, "besancon") == [1]
    if kit.database.dialect == "postgresql":
        async with kit.database.session() as session:
            stored = await session.scalar(text("SELECT count(*) FROM message_fts"))
            messages = await session.scalar(select(func.count()).select_from(Message))
        assert stored == messages == 1  # one stored vector per message, gone with it


async def test_a_rare_word_outranks_a_common_one_repeated(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    """BM25 on both backends: in a dancer's room "dance" says little, "Marley" a lot."""
    kit = kit_factory()
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    for i in range(30):
        await kit.say(room, f"Dance, dance, dance again in class {i}!", user=alice)
    marley = await kit.say(room, "The floor of the studio is Marley, finally.", user=alice)
    for i in range(30):
        await kit.say(room, f"We dance at the studio with {i} dance students.", user=alice)

    found = await _found(kit, room.id, "What dance floor is at the studio, Marley?")
    assert found[0] == marley.seq
    # Every other hit holds a query word too (the common ones still rank the rest).
    assert len(found) == 12


async def test_postgresql_ranks_the_stored_vectors_through_an_index(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory()
    if kit.database.dialect != "postgresql":
        return
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    for i in range(40):
        await kit.say(room, f"The lighthouse keeper paints seagull number {i}.", user=alice)
    found, statements = await _search_statements(kit, room.id, "lighthouse seagulls")
    assert len(found) == 12
    # The room's size, the words' document frequencies, the ranking: none reads the whole table.
    assert len(statements) == 3
    for statement, parameters in statements:
        assert "to_tsvector" not in statement  # ranked from the stored vectors
        plan = await _explain(kit, statement, parameters)
        assert "on message_fts" in plan and "Seq Scan" not in plan, plan


async def test_postgresql_generic_plans_of_the_search_use_its_indexes(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    """asyncpg prepares every statement, and after five runs on one connection PostgreSQL may
    keep a generic plan, blind to the parameters: each of the search's statements must still
    go through an index then (a LIMIT given as a parameter once made it scan the table)."""
    kit = kit_factory()
    if kit.database.dialect != "postgresql":
        pytest.skip("PostgreSQL's plan cache")
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    await _bulk_insert(kit, room, alice, ROWS)  # a room of some size: plans differ then
    async with kit.database.engine.begin() as conn:
        await conn.execute(text("ANALYZE message_fts"))
    found, statements = await _search_statements(kit, room.id, "lighthouse seagull")
    assert found
    assert len(statements) == 3
    async with kit.database.engine.connect() as conn:
        await conn.exec_driver_sql("SET plan_cache_mode = force_generic_plan")
        for number, (statement, parameters) in enumerate(statements):
            await conn.exec_driver_sql(f"PREPARE eko_search_{number} AS {statement}")
            values = ", ".join(_literal(value) for value in parameters)
            result = await conn.exec_driver_sql(f"EXPLAIN EXECUTE eko_search_{number}({values})")
            plan = "\n".join(str(row[0]) for row in result)
            assert "on message_fts" in plan and "Seq Scan" not in plan, (statement, plan)


async def test_postgresql_searches_never_read_a_pending_list(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    """Migration 0016: a GIN index's pending list (where `fastupdate` parks new entries until
    VACUUM) was read whole by every search, 6-10 ms at 10,000 turns. New messages' words now
    go straight into the index: after a bulk insert, nothing is left pending."""
    kit = kit_factory()
    if kit.database.dialect != "postgresql":
        pytest.skip("PostgreSQL's GIN index")
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    await _bulk_insert(kit, room, alice, 300)
    async with kit.database.engine.begin() as conn:
        # The number of pending pages it merged: none when inserts update the index directly.
        pending = await conn.scalar(text("SELECT gin_clean_pending_list('message_fts_doc')"))
    assert pending == 0
    found, _ = await _search_statements(kit, room.id, "lighthouse seagull")
    assert found


async def _bulk_insert(kit: MemoryKit, room: Room, sender: User, rows: int) -> None:
    """`rows` short turns in one INSERT, as an import or a bench loads them."""
    async with kit.database.session() as session:
        await session.execute(
            insert(Message),
            [
                {
                    "id": uuid.uuid4().hex,
                    "room_id": room.id,
                    "seq": seq,
                    "sender_id": sender.id,
                    "role": "user",
                    "type": "message",
                    "content": f"Day {seq}: the keeper paints {WORDS[seq % len(WORDS)]} again.",
                    "meta": {},
                    "char_count": 40,
                    "char_end": 40 * seq,
                    "dedupe_key": f"bulk:{room.id}:{seq}",
                }
                for seq in range(1, rows + 1)
            ],
        )


# Enough rows that a plan blind to the LIMIT chose to scan the table (it did from 1,000).
ROWS = 1_000
WORDS = ["the lighthouse", "a seagull", "boats", "the harbour", "waves", "nets", "gulls"]


def _literal(value: Any) -> str:
    """A parameter as SQL (EXECUTE's arguments cannot be bound): the test's own values."""
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, list | tuple):
        return "ARRAY[" + ", ".join(_literal(item) for item in value) + "]"
    return repr(value)


async def test_odd_queries_never_break_the_search(kit_factory: Callable[..., MemoryKit]) -> None:
    """Words the query parser treats specially, or that hold no lexeme, are searched or
    skipped: never an error (the words reach to_tsquery on PostgreSQL, MATCH on SQLite)."""
    kit = kit_factory()
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    said = await kit.say(room, "Le fichier config_prod du projet C++ à 日本語 tient.", user=alice)
    seq = said.seq
    for query in ["config_prod", "___ ???", "C++ AND OR NOT", "l'été: (x) | !y & z*", "日本語"]:
        found = await _found(kit, room.id, query)
        assert found in ([], [seq]), (query, found)
    assert await _found(kit, room.id, "config_prod") == [seq]
