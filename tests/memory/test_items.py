"""Facts / self / goals: dedup on write, search within scopes, the goal life cycle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import func, select

from eko.memory.items import NewItem
from eko.memory.scopes import GLOBAL, room_key, user_key
from eko.store.memory_models import MemoryItem
from eko.store.models import Embedding

from .conftest import MemoryKit

CORENTIN_VARIANTS = [
    "Qui est Corentin ?",
    "qui est corentin",
    "Qui est Corentin ?",
    "QUI EST CORENTIN ?",
    "Qui est Corentin !",
]


async def _count(kit: MemoryKit, model: Any, *where: Any) -> int:
    async with kit.database.session() as session:
        query = select(func.count()).select_from(model)
        for clause in where:
            query = query.where(clause)
        return int((await session.execute(query)).scalar_one())


async def test_duplicate_curiosities_collapse_into_one_goal(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory()
    scope = room_key("lobby-1")
    results = [
        await kit.memory.items.remember(NewItem("goal", "Corentin", text), scope=scope)
        for text in CORENTIN_VARIANTS
    ]

    assert [r.created for r in results] == [True, False, False, False, False]
    assert {r.item.id for r in results} == {results[0].item.id}
    goals = await kit.memory.items.list_items(keys=[scope], kind="goal")
    assert len(goals) == 1
    assert goals[0].mention_count == 5 and goals[0].status == "open"
    assert goals[0].content == "Qui est Corentin ?"  # a goal keeps its first wording
    # One vector per item, not per mention.
    assert await _count(kit, Embedding, Embedding.collection == "memory") == 1


async def test_dedup_needs_the_same_subject_kind_and_scope(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory()
    items = kit.memory.items
    first = await items.remember(NewItem("goal", "Corentin", "Qui est Corentin ?"), scope=GLOBAL)
    other_subject = await items.remember(
        NewItem("goal", "Simon", "Qui est Corentin ?"), scope=GLOBAL
    )
    other_kind = await items.remember(
        NewItem("fact", "Corentin", "Qui est Corentin ?"), scope=GLOBAL
    )
    other_scope = await items.remember(
        NewItem("goal", "Corentin", "Qui est Corentin ?"), scope=room_key("r2")
    )
    different = await items.remember(
        NewItem("goal", "Corentin", "Où habite Corentin depuis son déménagement ?"), scope=GLOBAL
    )

    assert first.created and other_subject.created and other_kind.created
    assert other_scope.created and different.created
    assert await _count(kit, MemoryItem) == 5


async def test_a_duplicate_fact_takes_the_newer_wording(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory(memory_dedup_min_score=0.6)
    items = kit.memory.items
    first = await items.remember(
        NewItem("fact", "corentin", "Corentin est dev chez lemlist", confidence=0.6), scope=GLOBAL
    )
    second = await items.remember(
        NewItem("fact", "Corentin", "Corentin est dev senior chez lemlist", confidence=0.9),
        scope=GLOBAL,
    )

    assert first.created and not second.created
    assert second.similarity is not None and second.similarity >= 0.6
    item = await items.get(first.item.id)
    assert item is not None
    assert item.content == "Corentin est dev senior chez lemlist"
    assert (item.mention_count, item.update_count, item.confidence) == (2, 1, 0.9)
    hits = await items.search(keys=[GLOBAL], query="dev senior lemlist")
    assert [hit.item.id for hit in hits] == [item.id]


async def test_search_stays_within_the_given_scopes_and_kinds(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory()
    alice, bob = await kit.user("alice"), await kit.user("bob")
    items = kit.memory.items
    await items.remember(
        NewItem("fact", "Alice", "Alice adore le jazz manouche"), scope=user_key(alice)
    )
    await items.remember(NewItem("fact", "Bob", "Bob adore le jazz modal"), scope=user_key(bob))
    await items.remember(
        NewItem("goal", "jazz", "C'est quoi le jazz manouche ?"), scope=user_key(alice)
    )

    alice_hits = await items.search(keys=[user_key(alice)], query="jazz", kinds=["fact"])
    bob_hits = await items.search(keys=[user_key(bob)], query="jazz manouche")

    assert [h.item.subject for h in alice_hits] == ["Alice"]
    assert [h.item.subject for h in bob_hits] == ["Bob"]
    assert await items.search(keys=[], query="jazz") == []


async def test_answering_a_goal_turns_it_into_a_fact(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory()
    items = kit.memory.items
    scope = room_key("lobby")
    goal = (
        await items.remember(NewItem("goal", "Corentin", "Qui est Corentin ?"), scope=scope)
    ).item
    asked = await items.mark_asked(goal.id)
    assert asked is not None and asked.status == "asked" and asked.asked_at is not None

    fact = await items.answer_goal(
        goal.id, answer="Corentin est dev chez lemlist", scope=scope, source_message_id="m1"
    )

    assert fact is not None and fact.created
    closed = await items.get(goal.id)
    assert closed is not None
    assert (closed.status, closed.answer_item_id) == ("answered", fact.item.id)
    assert fact.item.kind == "fact" and fact.item.subject == "Corentin"
    assert await items.open_goals(keys=[scope]) == []
    # Answered once is enough; a rephrased curiosity folds into the closed goal.
    assert await items.answer_goal(goal.id, answer="autre", scope=scope) is None
    again = await items.remember(NewItem("goal", "Corentin", "Qui est Corentin ?"), scope=scope)
    assert not again.created and again.item.status == "answered"


async def test_delete_removes_the_item_and_its_vector(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory()
    written = await kit.memory.items.remember(
        NewItem("self", "name", "Je m'appelle Eko"), scope=GLOBAL
    )

    assert await kit.memory.items.delete(written.item.id)
    assert not await kit.memory.items.delete(written.item.id)
    assert await kit.memory.items.get(written.item.id) is None
    assert await _count(kit, Embedding, Embedding.collection == "memory") == 0


def test_a_bad_kind_or_empty_content_is_refused() -> None:
    with pytest.raises(ValueError):
        NewItem("opinion", "x", "y")
    with pytest.raises(ValueError):
        NewItem("fact", "x", "   ")
