"""Isolation: one user's private memory never reaches another user; lobby talk stays in the lobby.

Every test first shows the memory IS found where it belongs (so a broken search cannot pass for
isolation), then tries to read it across users and rooms and must find nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from eko.memory.items import NewItem
from eko.memory.scopes import GLOBAL, room_key, turn_keys, user_key, visibility, write_key
from eko.store import rooms as room_repo
from eko.store.memory_models import Summary
from eko.store.models import Room, User
from tests.api.conftest import HarnessFactory

from .conftest import MemoryKit

SECRET = "Alice a un rendez-vous médical confidentiel lundi"
LOBBY_FACT = "Le lobby organise un pique-nique vendredi"
QUERY = "rendez-vous médical confidentiel pique-nique lundi vendredi"


@dataclass
class World:
    alice: User
    bob: User
    alice_room: Room
    bob_room: Room
    lobby: Room


async def _world(kit: MemoryKit) -> World:
    alice, bob = await kit.user("alice"), await kit.user("bob")
    alice_room, bob_room = await kit.room(alice), await kit.room(bob)
    lobby = await kit.room(alice, kind="lobby", members=[bob])
    items = kit.memory.items
    await items.remember(NewItem("fact", "Alice", SECRET), scope=write_key(alice_room, alice))
    await items.remember(NewItem("fact", "lobby", LOBBY_FACT), scope=write_key(lobby, bob))
    for _ in range(3):
        await kit.say(alice_room, SECRET, user=alice)
    async with kit.database.session() as session:
        summary = Summary(
            room_id=alice_room.id,
            level=1,
            char_range_start=0,
            char_range_end=10,
            first_seq=1,
            last_seq=1,
            conversation_summary=SECRET,
            actions_summary="Aucun outil.",
            char_count=60,
            period_start=datetime.now(UTC),
            period_end=datetime.now(UTC),
            meta={},
            embedding_model=kit.embedder.name,
        )
        session.add(summary)
        await session.flush()
        vector = (await kit.embedder.embed([SECRET], kind="passage"))[0]
        await kit.vectors.upsert(
            session,
            collection="summary",
            item_id=summary.id,
            key=room_key(alice_room.id),
            text=SECRET,
            vector=np.asarray(vector),
            model=kit.embedder.name,
        )
    return World(alice, bob, alice_room, bob_room, lobby)


def _mentions_secret(text: str) -> bool:
    return "rendez-vous médical" in text


async def test_writes_land_in_the_speakers_scope(kit_factory: Callable[..., MemoryKit]) -> None:
    kit = kit_factory()
    world = await _world(kit)
    assert write_key(world.alice_room, world.alice) == user_key(world.alice)
    assert write_key(world.lobby, world.alice) == room_key(world.lobby.id)
    assert turn_keys(world.lobby, world.alice) == [room_key(world.lobby.id), GLOBAL]


async def test_contexts_never_cross_users_or_rooms(kit_factory: Callable[..., MemoryKit]) -> None:
    kit = kit_factory(recent_turns=1, rag_min_score=0.1, memory_context_min_score=0.1)
    world = await _world(kit)
    build = kit.memory.context.build

    own = await build(room=world.alice_room, user=world.alice, query=QUERY, recent=False)
    assert [p.content for p in own.parts.items] == [SECRET]  # positive control
    assert len(own.parts.summaries) == 1

    bob_direct = await build(room=world.bob_room, user=world.bob, query=QUERY)
    alice_in_lobby = await build(room=world.lobby, user=world.alice, query=QUERY)
    bob_in_lobby = await build(room=world.lobby, user=world.bob, query=QUERY)

    assert bob_direct.text == ""  # no alice secret, no lobby fact, no alice summary
    for context in (alice_in_lobby, bob_in_lobby):
        assert not _mentions_secret(context.text)
        assert [p.content for p in context.parts.items] == [LOBBY_FACT]


async def test_a_second_member_of_a_direct_room_never_gets_the_owners_private_facts(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory(recent_turns=1, rag_min_score=0.1, memory_context_min_score=0.1)
    world = await _world(kit)
    async with kit.database.session() as session:  # staff added bob to alice's direct room
        await room_repo.add_member(session, room_id=world.alice_room.id, user_id=world.bob.id)

    bob_there = await kit.memory.context.build(
        room=world.alice_room, user=world.bob, query=QUERY, recent=False
    )

    assert bob_there.parts.items == []  # alice's private facts stay hers
    assert len(bob_there.parts.summaries) == 1  # the room's history is the room's


async def test_item_search_with_another_users_keys_finds_nothing(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory()
    world = await _world(kit)
    search = kit.memory.items.search

    assert await search(keys=[user_key(world.alice)], query=SECRET, min_score=0.1)
    for keys in (
        turn_keys(world.bob_room, world.bob),
        turn_keys(world.lobby, world.alice),
        turn_keys(world.lobby, world.bob),
    ):
        hits = await search(keys=keys, query=SECRET, min_score=0.1, k=50)
        assert all(not _mentions_secret(hit.item.content) for hit in hits)
    async with kit.database.session() as session:
        seen = await visibility(session, world.bob)
    assert not seen.can_read(user_key(world.alice))
    assert not seen.can_read(room_key(world.alice_room.id))
    assert seen.can_read(room_key(world.lobby.id)) and seen.can_read(GLOBAL)
    assert not seen.can_write(GLOBAL)


async def test_the_api_shows_nothing_across_users_or_rooms(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        alice_id, alice = await h.user("alice")
        _, bob = await h.user("bob")
        _, staff = await h.user("root", role="staff")
        alice_room = await h.direct_room(alice)
        bob_room = await h.direct_room(bob)
        c = h.client
        written = await c.post(
            "/v1/memory/items",
            headers=alice,
            json={"kind": "fact", "subject": "Alice", "content": SECRET},
        )
        assert written.status_code == 201, written.text
        item_id = written.json()["item"]["id"]
        assert written.json()["item"]["scope"] == f"user:{alice_id}"

        own = (await c.get("/v1/memory/items", headers=alice)).json()
        own_search = (
            await c.get("/v1/memory/items/search", params={"q": SECRET}, headers=alice)
        ).json()
        assert [i["id"] for i in own] == [item_id] and own_search[0]["item"]["id"] == item_id

        assert (await c.get("/v1/memory/items", headers=bob)).json() == []
        assert (
            await c.get("/v1/memory/items/search", params={"q": SECRET}, headers=bob)
        ).json() == []
        assert (
            await c.get("/v1/memory/items", params={"scope": f"user:{alice_id}"}, headers=bob)
        ).json() == []
        for method in ("GET", "DELETE"):
            response = await c.request(method, f"/v1/memory/items/{item_id}", headers=bob)
            assert response.status_code == 404
            assert response.headers["content-type"] == "application/problem+json"
        for path in ("summaries", "topics", "summaries/search?q=x", "context?q=x"):
            response = await c.get(f"/v1/rooms/{alice_room}/{path}", headers=bob)
            assert response.status_code == 404, path
        preview = (
            await c.get(f"/v1/rooms/{bob_room}/context", params={"q": SECRET}, headers=bob)
        ).json()
        assert not _mentions_secret(preview["text"]) and preview["parts"]["items"] == []
        forged = await c.post(
            "/v1/memory/items",
            headers=bob,
            json={"kind": "fact", "content": "x", "scope": f"user:{alice_id}"},
        )
        assert forged.status_code == 403

        # Staff sees every scope; the item is still there.
        staff_list = (await c.get("/v1/memory/items", headers=staff)).json()
        assert [i["id"] for i in staff_list] == [item_id]
        staff_search = (
            await c.get("/v1/memory/items/search", params={"q": SECRET}, headers=staff)
        ).json()
        assert [hit["item"]["id"] for hit in staff_search] == [item_id]
