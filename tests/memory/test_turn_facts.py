"""Turn → facts in the context (both backends): a recalled turn brings the facts drawn from it,
within the caller's scopes, even when no fact is close enough to the question by meaning."""

from __future__ import annotations

from collections.abc import Callable

from eko.memory.items import NewItem
from eko.memory.scopes import room_key, user_key

from .conftest import MemoryKit


async def test_a_recalled_turn_brings_the_facts_drawn_from_it(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    # No fact is close enough by meaning (min score 1.0): only the link can bring one.
    kit = kit_factory(recent_turns=1, lobby_recent_turns=1, memory_context_min_score=1.0)
    alice, bob = await kit.user("Alice"), await kit.user("Bob")
    room = await kit.room(alice, kind="lobby", members=[bob])
    source = await kit.say(room, "We adopted a greyhound from the shelter.", user=alice)
    for i in range(4):
        await kit.say(room, f"Small talk {i}.", user=bob)
    await kit.memory.items.remember(
        NewItem(
            "fact",
            "Alice",
            "Alice's dog is called Pixel",
            source_message_id=source.id,
            source_room_id=room.id,
        ),
        scope=room_key(room.id),
    )
    # Drawn from the same turn, but Bob's private memory: never shown in Alice's context.
    await kit.memory.items.remember(
        NewItem("fact", "Bob", "Bob is allergic to dogs", source_message_id=source.id),
        scope=user_key(bob),
    )
    question = await kit.say(room, "Which greyhound did Alice adopt?", user=alice)

    built = await kit.memory.context.build(
        room=room, user=alice, query=question.content, before_seq=question.seq
    )
    assert "adopted a greyhound" in built.text  # the turn, recalled by its words
    assert "Alice's dog is called Pixel" in built.text  # the fact it brought
    assert "allergic" not in built.text
    assert built.stats["turn_facts"] == 1

    off = kit_factory(
        recent_turns=1, lobby_recent_turns=1, memory_context_min_score=1.0, memory_turn_facts=0
    )
    without = await off.memory.context.build(
        room=room, user=alice, query=question.content, before_seq=question.seq
    )
    assert "adopted a greyhound" in without.text
    assert "Pixel" not in without.text
