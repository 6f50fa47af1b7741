"""Turn → facts (eko.memory.fact_links) and the per-person What You Know (render_items).

Each isolation test first shows the fact IS found with the owner's keys, so a broken lookup
cannot pass for isolation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from sqlalchemy import text

from eko.memory.context_parts import ItemPart, render_items
from eko.memory.fact_links import facts_of_messages, facts_query
from eko.memory.items import NewItem
from eko.memory.scopes import GLOBAL, room_key, turn_keys, user_key
from eko.store.db import Database
from eko.store.memory_models import MemoryItem
from eko.store.migrate import upgrade
from eko.store.models import Message

from .conftest import MemoryKit


async def _facts(
    kit: MemoryKit,
    message_ids: Sequence[str],
    keys: Sequence[str],
    *,
    limit: int = 10,
    kinds: Sequence[str] = ("fact", "self"),
) -> list[str]:
    async with kit.database.session() as session:
        found = await facts_of_messages(
            session, message_ids=message_ids, keys=keys, kinds=kinds, limit=limit
        )
    return [item.content for item in found]


async def _remember(
    kit: MemoryKit, message: Message, scope: str, kind: str, subject: str, content: str
) -> MemoryItem:
    new = NewItem(
        kind, subject, content, source_message_id=message.id, source_room_id=message.room_id
    )
    return (await kit.memory.items.remember(new, scope=scope)).item


async def test_a_turn_brings_only_the_facts_its_reader_may_see(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory()
    alice, bob = await kit.user("alice"), await kit.user("bob")
    alice_room, bob_room = await kit.room(alice), await kit.room(bob)
    lobby = await kit.room(alice, kind="lobby", members=[bob])
    said = await kit.say(lobby, "Je vais à Lyon lundi, j'ai un rendez-vous médical", user=alice)
    # One turn, drawn on in three scopes: Alice's private memory, Bob's, and the lobby's.
    await _remember(kit, said, user_key(alice), "fact", "Alice", "Alice a un rendez-vous médical")
    await _remember(kit, said, user_key(bob), "fact", "Alice", "Bob pense qu'Alice est malade")
    await _remember(kit, said, room_key(lobby.id), "fact", "Alice", "Alice va à Lyon lundi")

    for_alice = await _facts(kit, [said.id], turn_keys(alice_room, alice))
    for_bob = await _facts(kit, [said.id], turn_keys(bob_room, bob))
    in_lobby = await _facts(kit, [said.id], turn_keys(lobby, alice))

    assert for_alice == ["Alice a un rendez-vous médical"]
    assert for_bob == ["Bob pense qu'Alice est malade"]
    assert in_lobby == ["Alice va à Lyon lundi"]  # nobody's private scope in a lobby
    assert await _facts(kit, [said.id], []) == []


async def test_facts_follow_the_order_of_the_turns_and_stop_at_the_limit(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory()
    alice = await kit.user("alice")
    room = await kit.room(alice)
    first, second, third = [
        await kit.say(room, text, user=alice) for text in ("un", "deux", "trois")
    ]
    scope = user_key(alice)
    await _remember(kit, first, scope, "fact", "Alice", "Alice joue du violon")
    await _remember(kit, second, scope, "fact", "Marc", "Marc est le frère d'Alice")
    await _remember(kit, third, scope, "fact", "Zoé", "Zoé habite Nantes")
    await _remember(kit, third, scope, "fact", "Nantes", "Nantes est au bord de la Loire")
    keys = turn_keys(room, alice)

    # The third turn's items newest first, then the first's; the second was not asked for.
    assert await _facts(kit, [third.id, first.id, third.id], keys) == [
        "Nantes est au bord de la Loire",
        "Zoé habite Nantes",
        "Alice joue du violon",
    ]
    assert await _facts(kit, [first.id, third.id], keys, limit=2) == [
        "Alice joue du violon",
        "Nantes est au bord de la Loire",
    ]
    assert await _facts(kit, [first.id], keys, limit=0) == []
    assert await _facts(kit, ["no-such-message"], keys) == []


async def test_deleted_items_goals_and_other_kinds_stay_out(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory()
    alice = await kit.user("alice")
    room = await kit.room(alice)
    said = await kit.say(room, "Corentin est mon cousin, tu es drôle", user=alice)
    scope = user_key(alice)
    kept = await _remember(kit, said, scope, "fact", "Corentin", "Corentin est le cousin d'Alice")
    gone = await _remember(kit, said, scope, "fact", "Alice", "Alice a un cousin")
    await _remember(kit, said, GLOBAL, "self", "humour", "Je suis drôle")
    goal = await _remember(kit, said, scope, "goal", "Corentin", "Qui est Corentin ?")
    keys = turn_keys(room, alice)
    assert len(await _facts(kit, [said.id], keys)) == 3

    assert await kit.memory.items.delete(gone.id)

    assert sorted(await _facts(kit, [said.id], keys)) == [
        "Corentin est le cousin d'Alice",
        "Je suis drôle",
    ]
    assert await _facts(kit, [said.id], keys, kinds=("fact",)) == [kept.content]
    assert await _facts(kit, [said.id], keys, kinds=("goal",)) == [goal.content]
    await kit.memory.items.answer_goal(goal.id, answer="Corentin est le cousin", scope=scope)
    assert await _facts(kit, [said.id], keys, kinds=("goal",)) == []  # settled by its answer


async def test_the_lookup_starts_from_the_source_index_not_the_callers_scopes(
    tmp_path: Path,
) -> None:
    """SQLite without statistics would rather walk every item of the caller's scopes (the
    dedup index on scope, kind) than the few items of the recalled turns."""
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'eko.db'}")
    try:
        await upgrade(database)
        query = facts_query(  # what a context recalls: tens of turns, facts and self
            message_ids=[f"m{n}" for n in range(30)],
            keys=["user:u", "room:r", GLOBAL],
            kinds=["fact", "self"],
            limit=8,
        )
        assert query is not None
        sql = query.compile(database.engine, compile_kwargs={"literal_binds": True})
        async with database.engine.connect() as connection:
            plan = (await connection.execute(text(f"EXPLAIN QUERY PLAN {sql}"))).all()
    finally:
        await database.dispose()

    assert "USING INDEX ix_memory_items_source" in plan[0][3]
    assert facts_query(message_ids=["m1"], keys=[], kinds=["fact"], limit=5) is None


def _fact(subject: str, content: str, kind: str = "fact") -> ItemPart:
    return ItemPart(f"id-{content}", kind, subject, content, 0.5)


def test_what_you_know_is_one_block_per_person_in_the_order_of_their_best_fact() -> None:
    items = [
        _fact("Caroline", "researched adoption agencies"),
        _fact("Melanie", "paints sunsets"),
        _fact("", "the lake froze in January"),
        _fact("caroline", "is a counsellor"),
        _fact("name", "I am Eko", kind="self"),
        _fact("Melanie", "has two kids"),
        _fact("?", "it rained all week"),
    ]

    assert render_items(items) == (
        "- the lake froze in January\n- it rained all week\n\n"
        "Caroline:\n- researched adoption agencies\n- is a counsellor\n\n"
        "Melanie:\n- paints sunsets\n- has two kids\n\n"
        "About yourself:\n- name: I am Eko"
    )
    assert render_items(list(reversed(items))).startswith(
        "- it rained all week\n- the lake froze in January\n\nMelanie:\n- has two kids\n"
    )
    assert render_items(items) == render_items(items)  # a pure function of the list
    assert render_items([]) == ""
    assert render_items([_fact("x", "I am Eko", kind="self")]) == "About yourself:\n- x: I am Eko"
