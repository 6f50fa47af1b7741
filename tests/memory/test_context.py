"""The dual context: recent turns, RAG over summaries (scoring, recent-window skip), facts."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select

from eko.embed.base import Kind
from eko.memory.context_rag import level_boost, recency_factor
from eko.memory.items import NewItem
from eko.memory.scopes import GLOBAL, room_key, user_key
from eko.store.memory_models import Summary, SummaryTopic, Topic
from eko.store.models import Room

from .conftest import MemoryKit

NOW = datetime(2026, 1, 20, 12, 0, tzinfo=UTC)


def at_cosine(c: float) -> list[float]:
    """A unit vector whose cosine with the query [1, 0, 0, 0] is c."""
    return [c, math.sqrt(max(0.0, 1 - c * c)), 0.0, 0.0]


class TableEmbedder:
    """Vectors looked up by text: similarities exactly as the test wants them."""

    name = "table-4"
    dim = 4
    calibrated_threshold = 0.95

    def __init__(self, table: dict[str, list[float]] | None = None) -> None:
        self.table = {"QUERY": [1.0, 0.0, 0.0, 0.0], **(table or {})}

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        rows = [self.table.get(text, [0.0, 0.0, 0.0, 1.0]) for text in texts]
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), 4)


async def store_summary(
    kit: MemoryKit,
    room: Room,
    *,
    level: int,
    start: int,
    end: int,
    cosine: float,
    period_end: datetime,
    seqs: tuple[int, int] = (1, 1),
    text: str = "",
    topic: str | None = None,
) -> Summary:
    async with kit.database.session() as session:
        summary = Summary(
            room_id=room.id,
            level=level,
            char_range_start=start,
            char_range_end=end,
            first_seq=seqs[0],
            last_seq=seqs[1],
            conversation_summary=text or f"L{level} {start}",
            actions_summary="Aucun outil.",
            char_count=50,
            period_start=period_end,
            period_end=period_end,
            meta={},
            embedding_model=kit.embedder.name,
        )
        session.add(summary)
        await session.flush()
        await kit.vectors.upsert(
            session,
            collection="summary",
            item_id=summary.id,
            key=room_key(room.id),
            text=summary.conversation_summary,
            vector=np.asarray(at_cosine(cosine)),
            model=kit.embedder.name,
        )
        if topic is not None:
            row = (await session.execute(select(Topic).where(Topic.name == topic))).scalar()
            if row is None:
                row = Topic(
                    scope=room_key(room.id),
                    name=topic,
                    name_key=topic.lower(),
                    embedding_model=kit.embedder.name,
                )
                session.add(row)
                await session.flush()
            session.add(SummaryTopic(summary_id=summary.id, topic_id=row.id))
        return summary


def test_level_boost_follows_the_table_then_grows_by_step() -> None:
    table = {1: 1.0, 2: 1.1, 3: 1.2}
    assert [level_boost(n, table, 0.1) for n in (1, 2, 3)] == [1.0, 1.1, 1.2]
    assert level_boost(5, table, 0.1) == pytest.approx(1.4)


def test_recency_decays_from_one_to_one_half() -> None:
    assert recency_factor(NOW, NOW, 7) == 1.0
    assert recency_factor(NOW - timedelta(days=7), NOW, 7) == pytest.approx(0.5 + 0.5 / math.e)
    assert recency_factor(NOW - timedelta(days=700), NOW, 7) == pytest.approx(0.5)
    assert recency_factor(NOW + timedelta(days=3), NOW, 7) == 1.0  # no bonus from the future


async def test_recent_turns_are_chronological_bounded_and_show_reasoning_and_tools(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory(recent_turns=3, recent_max_chars=5000, assistant_name="Eko")
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    for i in range(6):
        await kit.say(room, f"question {i}", user=alice)
        await kit.say(
            room,
            f"réponse {i}",
            role="assistant",
            reasoning=f"why {i}",
            tool_calls=[
                {
                    "tool_name": "search",
                    "arguments": {"q": str(i)},
                    "result": f"{i} hits",
                    "success": True,
                }
            ],
        )
    current = await kit.say(room, "et maintenant ?", user=alice)

    context = await kit.memory.context.build(
        room=room, user=alice, query=current.content, before_seq=current.seq
    )

    text = context.parts.recent.text
    assert context.parts.recent.turns == 3
    assert [line for line in text.splitlines() if line.startswith("User")] == [
        'User (Alice): "question 3"',
        'User (Alice): "question 4"',
        'User (Alice): "question 5"',
    ]
    assert '[reasoning: why 5]\n[tools: search(q="5") → Success: 5 hits]' in text
    assert "et maintenant" not in text  # the message being answered is the query, not history
    assert context.text.startswith("## Recent Conversation\n\nTurn 7 (")


async def test_recent_window_respects_the_character_budget(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory(recent_turns=10, recent_max_chars=1000)
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    for i in range(10):
        await kit.say(room, f"{i} " + "x" * 400, user=alice)

    context = await kit.memory.context.build(room=room, user=alice, query="x")

    assert len(context.parts.recent.text) <= 1000
    assert context.parts.recent.turns == 2  # two 420-char turns fit, a third does not
    huge = await kit.say(room, "y" * 3000, user=alice)
    alone = await kit.memory.context.build(room=room, user=alice, query="x")
    assert alone.parts.recent.turns == 1 and alone.parts.recent.first_seq == huge.seq
    assert len(alone.parts.recent.text) <= 1000  # the newest turn is cut, never dropped


async def test_rag_scores_similarity_times_level_boost_times_recency(
    database: Any, kit_factory: Callable[..., MemoryKit]
) -> None:
    kit = kit_factory(embedder=TableEmbedder(), recent_turns=1)
    alice = await kit.user("alice")
    room = await kit.room(alice)
    for _ in range(5):
        await kit.say(room, "z" * 1000, user=alice)  # chars 0-5000, recent window = 4000-5000
    # The seed's example: L3 0.85 two days old beats L1 0.90 ten days old.
    l3 = await store_summary(
        kit, room, level=3, start=0, end=3000, cosine=0.85, period_end=NOW - timedelta(days=2)
    )
    l1 = await store_summary(
        kit, room, level=1, start=3000, end=4000, cosine=0.90, period_end=NOW - timedelta(days=10)
    )
    await store_summary(
        kit, room, level=2, start=0, end=2000, cosine=0.5, period_end=NOW
    )  # under ragMinScore (0.7 for this embedder)
    await store_summary(
        kit, room, level=1, start=4000, end=5000, cosine=0.99, period_end=NOW
    )  # only covers the recent window

    context = await kit.memory.context.build(room=room, user=alice, query="QUERY", now=NOW)

    parts = context.parts.summaries
    assert [p.summary_id for p in parts] == [l3.id, l1.id]
    assert parts[0].score == pytest.approx(0.85 * 1.2 * (0.5 + 0.5 * math.exp(-2 / 7)), abs=1e-4)
    assert parts[1].score == pytest.approx(0.90 * 1.0 * (0.5 + 0.5 * math.exp(-10 / 7)), abs=1e-4)
    assert context.stats["summaries_skipped_recent"] == 1
    assert context.stats["summaries_above_min_score"] == 3
    assert "## Relevant Past Context\n\n[L3 Summary - chars 0-3000 - 2 days ago]" in context.text
    assert context.text.index("[L3 Summary") < context.text.index("[L1 Summary")


async def test_rag_keeps_the_top_n_and_can_stay_within_one_topic(
    database: Any, kit_factory: Callable[..., MemoryKit]
) -> None:
    kit = kit_factory(embedder=TableEmbedder(), rag_max_summaries=2, recent_turns=1)
    alice = await kit.user("alice")
    room = await kit.room(alice)
    await kit.say(room, "z" * 10, user=alice)
    for i, cosine in enumerate((0.95, 0.9, 0.8, 0.75)):
        await store_summary(
            kit,
            room,
            level=1,
            start=-1000 * (i + 1),
            end=-1000 * i,
            cosine=cosine,
            period_end=NOW,
            topic="jardin" if cosine < 0.85 else None,
        )

    top = await kit.memory.context.build(room=room, user=alice, query="QUERY", now=NOW)
    garden = await kit.memory.context.build(
        room=room, user=alice, query="QUERY", now=NOW, topic="jardin"
    )

    assert [round(p.similarity, 2) for p in top.parts.summaries] == [0.95, 0.9]
    assert [round(p.similarity, 2) for p in garden.parts.summaries] == [0.8, 0.75]
    assert garden.stats["topic"] == "jardin"


async def test_facts_and_self_knowledge_join_the_context(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    embedder = TableEmbedder(
        {
            "Alice vit à Besançon": at_cosine(0.9),
            "Je suis Eko": at_cosine(0.8),
            "Qui est Corentin ?": at_cosine(0.95),
            "Hors sujet": at_cosine(0.2),
        }
    )
    kit = kit_factory(embedder=embedder)
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    items = kit.memory.items
    await items.remember(NewItem("fact", "Alice", "Alice vit à Besançon"), scope=user_key(alice))
    await items.remember(NewItem("self", "name", "Je suis Eko"), scope=GLOBAL)
    await items.remember(NewItem("goal", "Corentin", "Qui est Corentin ?"), scope=GLOBAL)
    await items.remember(NewItem("fact", "x", "Hors sujet"), scope=GLOBAL)

    context = await kit.memory.context.build(room=room, user=alice, query="QUERY")

    assert [(p.kind, p.content) for p in context.parts.items] == [
        ("fact", "Alice vit à Besançon"),
        ("self", "Je suis Eko"),
    ]
    assert context.text.endswith(
        "## What You Know\n\nAlice:\n- Alice vit à Besançon\n\nAbout yourself:\n- name: Je suis Eko"
    )
