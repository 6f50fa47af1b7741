"""A room of 100k+ messages: the dual context stays bounded and never scans the room.

Messages and summaries are bulk-inserted straight into the database (the chat path would take
hours to make them); then the context is built as the chat path builds it, every statement it
sends to the `messages` table is captured and EXPLAINed: each must be an index range read.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from sqlalchemy import event, insert, text

from eko.memory.scopes import room_key
from eko.store.memory_models import Summary
from eko.store.models import Message, Room, User
from eko.store.vectors import VectorItem

from .conftest import MemoryKit

MESSAGES = 100_000
MESSAGE_CHARS = 100
MESSAGES_PER_L1 = 100  # one L1 per 10,000 characters, as with the default threshold
START = datetime(2025, 1, 1, tzinfo=UTC)
TOPICS = ["le jardin", "la voiture", "les vacances", "le travail", "la cuisine", "le sport"]


def _message_rows(room_id: str, sender_id: int, first: int, last: int) -> list[dict[str, Any]]:
    rows = []
    for seq in range(first, last + 1):
        role = "user" if seq % 2 else "assistant"
        topic = TOPICS[(seq // MESSAGES_PER_L1) % len(TOPICS)]
        content = f"{seq}: on parle de {topic}. ".ljust(MESSAGE_CHARS, ".")
        rows.append(
            {
                "id": uuid.uuid4().hex,
                "room_id": room_id,
                "seq": seq,
                "sender_id": sender_id if role == "user" else None,
                "role": role,
                "type": "message",
                "content": content,
                "meta": {},
                "char_count": MESSAGE_CHARS,
                "char_end": seq * MESSAGE_CHARS,
                "dedupe_key": f"bulk:{room_id}:{seq}",
                "created_at": START + timedelta(minutes=seq),
            }
        )
    return rows


async def _bulk_room(kit: MemoryKit, messages: int) -> tuple[User, Room]:
    alice = await kit.user(f"alice-{messages}")
    room = await kit.room(alice)
    async with kit.database.session() as session:
        for first in range(1, messages + 1, 10_000):
            last = min(messages, first + 9_999)
            await session.execute(insert(Message), _message_rows(room.id, alice.id, first, last))
    summaries: list[dict[str, Any]] = []
    texts: list[str] = []
    for index in range(messages // MESSAGES_PER_L1):
        topic = TOPICS[index % len(TOPICS)]
        first_seq, last_seq = index * MESSAGES_PER_L1 + 1, (index + 1) * MESSAGES_PER_L1
        texts.append(f"Ils ont parlé de {topic} (segment {index}).")
        summaries.append(
            {
                "id": uuid.uuid4().hex,
                "room_id": room.id,
                "level": 1,
                "char_range_start": (first_seq - 1) * MESSAGE_CHARS,
                "char_range_end": last_seq * MESSAGE_CHARS,
                "first_seq": first_seq,
                "last_seq": last_seq,
                "conversation_summary": texts[-1],
                "actions_summary": "Aucun outil.",
                "char_count": len(texts[-1]) + 12,
                "period_start": START + timedelta(minutes=first_seq),
                "period_end": START + timedelta(minutes=last_seq),
                "meta": {},
                "embedding_model": kit.embedder.name,
                "created_at": START,
            }
        )
    vectors = await kit.embedder.embed(texts, kind="passage")
    async with kit.database.session() as session:
        await session.execute(insert(Summary), summaries)
        await kit.vectors.upsert_many(
            session,
            collection="summary",
            model=kit.embedder.name,
            items=[
                VectorItem(s["id"], room_key(room.id), t)
                for s, t in zip(summaries, texts, strict=True)
            ],
            vectors=np.asarray(vectors),
        )
    if kit.database.dialect == "postgresql":
        async with kit.database.engine.begin() as conn:
            await conn.execute(text("ANALYZE messages"))
            await conn.execute(text("ANALYZE summaries"))
    return alice, room


async def _explain(kit: MemoryKit, statement: str, parameters: Any) -> str:
    prefix = "EXPLAIN QUERY PLAN " if kit.database.dialect == "sqlite" else "EXPLAIN "
    async with kit.database.engine.connect() as conn:
        result = await conn.exec_driver_sql(prefix + statement, parameters)
        return "\n".join(" ".join(str(col) for col in row) for row in result)


async def test_context_stays_bounded_and_indexed_in_a_room_of_100k_messages(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    # A summary after every recalled turn: the budget holds several summaries, so where the
    # RAG reaches is seen (by default recalled turns come first and one summary may fit).
    kit = kit_factory(rag_min_score=0.05, memory_context_turns_per_summary=1)
    small_user, small_room = await _bulk_room(kit, 2_000)
    alice, room = await _bulk_room(kit, MESSAGES)
    settings = kit.settings
    statements: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if "FROM messages" in statement or "FROM message_fts" in statement:
            statements.append((statement, parameters))

    event.listen(kit.database.engine.sync_engine, "before_cursor_execute", capture)
    try:
        late = await kit.memory.context.build(
            room=room, user=alice, query="le jardin", before_seq=MESSAGES + 1
        )
    finally:
        event.remove(kit.database.engine.sync_engine, "before_cursor_execute", capture)
    early = await kit.memory.context.build(room=small_room, user=small_user, query="le jardin")

    # Bounded: the same few turns and summaries whatever the room's length.
    for context in (late, early):
        assert context.parts.recent.turns <= settings.recent_turns
        assert len(context.parts.recent.text) <= settings.recent_max_chars
        assert 0 < len(context.parts.summaries) <= settings.rag_max_summaries
    assert len(late.text) <= settings.memory_context_max_chars  # one budget (memory/budget.py)
    assert abs(len(late.text) - len(early.text)) < 1000
    # The RAG found the topic, far back in the room.
    assert all("le jardin" in p.text for p in late.parts.summaries)
    assert min(p.char_range_start for p in late.parts.summaries) < MESSAGES * MESSAGE_CHARS // 2

    # Indexed: every read of `messages` is an index range with a LIMIT, never a scan (the
    # full-text recall goes through the full-text index).
    assert statements
    for statement, parameters in statements:
        assert "LIMIT" in statement.upper(), statement
        plan = await _explain(kit, statement, parameters)
        if "message_fts" in statement or "ts_rank_cd" in statement:
            # Recall by full text: through the full-text index, never a scan of the room; its
            # matches are ranked (sorted), which costs what they number, not the room's length.
            if kit.database.dialect == "sqlite":
                assert "VIRTUAL TABLE INDEX" in plan and "SCAN messages" not in plan, plan
            else:
                assert "on message_fts" in plan and "Seq Scan" not in plan, plan
            continue
        if kit.database.dialect == "sqlite":
            assert "SEARCH messages USING" in plan and "SCAN messages" not in plan, plan
            assert "TEMP B-TREE" not in plan, plan  # no sort of the whole room either
            if "(room_id=?)" in plan:
                # The room's whole range, unless read in the index's order up to the LIMIT
                # (the newest turns); a lookup of ids must go by primary key.
                assert "ORDER BY" in statement.upper(), (statement, plan)
        else:
            assert "Index" in plan and "Seq Scan" not in plan and "Sort" not in plan, plan
