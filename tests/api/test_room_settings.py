"""What the web page needs from the API: room titles, rename, delete, and the user's own settings
(PATCH /v1/me). Both backends."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from eko.memory.items import NewItem
from eko.memory.scopes import room_key
from eko.store.memory_models import MemoryItem
from eko.store.message_versions import list_versions
from eko.store.models import Embedding, Message, Room, RoomMember
from tests.api.conftest import HarnessFactory

PROBLEM = "application/problem+json"


async def _post(h: Any, room_id: str, headers: dict[str, str], content: str) -> dict[str, Any]:
    response = await h.client.post(
        f"/v1/rooms/{room_id}/messages", json={"content": content}, headers=headers
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_a_default_named_room_is_titled_by_its_first_message(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        _, headers = await h.user("alice")
        fresh = await h.direct_room(headers)
        chatty = await h.direct_room(headers)
        named = await h.direct_room(headers, name="Vacances")
        long_first = "  Bonjour,\n  je voudrais   " + "planifier un voyage " * 10
        await _post(h, chatty, headers, long_first)
        await _post(h, chatty, headers, "Deuxième message")
        await _post(h, named, headers, "Un message")
        rooms = {r["id"]: r for r in (await h.client.get("/v1/rooms", headers=headers)).json()}
        single = (await h.client.get(f"/v1/rooms/{chatty}", headers=headers)).json()
    assert rooms[fresh]["title"] == rooms[fresh]["name"] == "alice & Eko"
    title = rooms[chatty]["title"]
    assert title.startswith("Bonjour, je voudrais planifier un voyage") and title.endswith("…")
    assert len(title) == 60 and "\n" not in title
    assert single["title"] == title
    assert rooms[named]["title"] == "Vacances"


async def test_rename_by_a_member_only(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, alice = await h.user("alice")
        _, bob = await h.user("bob")
        room_id = await h.direct_room(alice)
        await _post(h, room_id, alice, "Premier message")
        renamed = await h.client.patch(
            f"/v1/rooms/{room_id}", json={"name": "  Projet Lyon  "}, headers=alice
        )
        stranger = await h.client.patch(f"/v1/rooms/{room_id}", json={"name": "x"}, headers=bob)
        blank = await h.client.patch(f"/v1/rooms/{room_id}", json={"name": "   "}, headers=alice)
        too_long = await h.client.patch(
            f"/v1/rooms/{room_id}", json={"name": "x" * 201}, headers=alice
        )
        extra = await h.client.patch(
            f"/v1/rooms/{room_id}", json={"name": "ok", "kind": "lobby"}, headers=alice
        )
        listed = (await h.client.get("/v1/rooms", headers=alice)).json()
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["name"] == renamed.json()["title"] == "Projet Lyon"
    assert stranger.status_code == 404 and stranger.headers["content-type"] == PROBLEM
    for refused in (blank, too_long, extra):
        assert refused.status_code == 422 and refused.headers["content-type"] == PROBLEM
    # Refused renames changed nothing; the rename outranks the first message as the title.
    assert [r["title"] for r in listed] == ["Projet Lyon"]


async def test_delete_by_the_creator_cascades(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, alice = await h.user("alice")
        _, bob = await h.user("bob")
        room_id = await h.direct_room(alice)
        kept = await h.direct_room(alice)
        exchange = await _post(h, room_id, alice, "À effacer")
        await _post(h, kept, alice, "À garder")
        reply_id = exchange["assistant_message"]["id"]
        regenerated = await h.client.post(
            f"/v1/rooms/{room_id}/messages/{reply_id}/regenerate", headers=alice
        )
        assert regenerated.status_code == 200, regenerated.text
        by_stranger = await h.client.delete(f"/v1/rooms/{room_id}", headers=bob)
        deleted = await h.client.delete(f"/v1/rooms/{room_id}", headers=alice)
        again = await h.client.get(f"/v1/rooms/{room_id}", headers=alice)
        listed = [r["id"] for r in (await h.client.get("/v1/rooms", headers=alice)).json()]
        async with h.services.database.session() as session:
            left = await session.execute(
                select(func.count()).select_from(Message).where(Message.room_id == room_id)
            )
            members = await session.execute(
                select(func.count()).select_from(RoomMember).where(RoomMember.room_id == room_id)
            )
            versions = await list_versions(session, message_id=reply_id)
            kept_messages = await session.execute(
                select(func.count()).select_from(Message).where(Message.room_id == kept)
            )
            room = await session.get(Room, room_id)
    assert by_stranger.status_code == 404
    assert deleted.status_code == 204 and deleted.content == b""
    assert again.status_code == 404 and listed == [kept]
    assert left.scalar_one() == 0 and members.scalar_one() == 0 and list(versions) == []
    assert room is None and kept_messages.scalar_one() == 2


async def test_only_the_creator_of_a_direct_room_deletes_it(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        bob_id, bob = await h.user("bob")
        _, root = await h.user("root", role="staff")
        lobby = (
            await h.client.post("/v1/rooms", json={"kind": "lobby", "name": "Salon"}, headers=root)
        ).json()["id"]
        direct = await h.direct_room(root)
        added = await h.client.post(
            f"/v1/rooms/{direct}/members", json={"public_id": bob_id}, headers=root
        )
        assert added.status_code == 204
        member_delete = await h.client.delete(f"/v1/rooms/{direct}", headers=bob)
        lobby_delete = await h.client.delete(f"/v1/rooms/{lobby}", headers=root)
        still = await h.client.get(f"/v1/rooms/{direct}", headers=bob)
    assert member_delete.status_code == 403 and member_delete.headers["content-type"] == PROBLEM
    assert lobby_delete.status_code == 403
    assert still.status_code == 200


async def test_patch_me_changes_name_and_language(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, headers = await h.user("alice")
        named = await h.client.patch("/v1/me", json={"display_name": " Alice "}, headers=headers)
        language = await h.client.patch("/v1/me", json={"language": "fr"}, headers=headers)
        bad_language = await h.client.patch("/v1/me", json={"language": "de"}, headers=headers)
        blank = await h.client.patch("/v1/me", json={"display_name": "  "}, headers=headers)
        nul = await h.client.patch("/v1/me", json={"display_name": "a\u0000b"}, headers=headers)
        unknown = await h.client.patch("/v1/me", json={"role": "staff"}, headers=headers)
        me = (await h.client.get("/v1/me", headers=headers)).json()
    assert named.status_code == 200 and named.json()["display_name"] == "Alice"
    assert language.status_code == 200 and language.json()["settings"]["language"] == "fr"
    for refused in (bad_language, blank, nul, unknown):
        assert refused.status_code == 422 and refused.headers["content-type"] == PROBLEM
    assert me["display_name"] == "Alice" and me["settings"]["language"] == "fr"
    assert me["role"] == "member"


async def test_a_deleted_room_takes_its_vectors_and_memory_items_along(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        _, alice = await h.user("alice")
        gone = await h.direct_room(alice)
        kept = await h.direct_room(alice)
        await _post(h, gone, alice, "Mon chat s'appelle Pistache.")
        await _post(h, kept, alice, "Mon chien s'appelle Biscotte.")
        await h.services.jobs.drain()  # the after-reply jobs embed the rooms' turns
        for room_id in (gone, kept):
            built = await h.client.get(
                f"/v1/rooms/{room_id}/context", params={"q": "animal"}, headers=alice
            )
            assert built.status_code == 200, built.text
            await h.services.memory.items.remember(
                NewItem("fact", "alice", f"a un animal ({room_id})"), scope=room_key(room_id)
            )

        async def counts(room_id: str) -> tuple[int, int]:
            async with h.services.database.session() as session:
                vectors = await session.execute(
                    select(func.count())
                    .select_from(Embedding)
                    .where(Embedding.key == room_key(room_id))
                )
                items = await session.execute(
                    select(func.count())
                    .select_from(MemoryItem)
                    .where(MemoryItem.scope == room_key(room_id))
                )
                return vectors.scalar_one(), items.scalar_one()

        before = await counts(gone)
        deleted = await h.client.delete(f"/v1/rooms/{gone}", headers=alice)
        after, other = await counts(gone), await counts(kept)
    assert before[0] >= 3 and before[1] == 1  # two turns and the item's vector; the item
    assert deleted.status_code == 204
    assert after == (0, 0)
    assert other[0] >= 3 and other[1] == 1  # another room keeps its own


async def test_a_deleted_room_leaves_no_vector_in_the_servers_memory(
    make_harness: HarnessFactory,
) -> None:
    """The room's turn vectors are searched in memory: deleting the room through the API
    removes them there too, not only from the database."""
    async with make_harness() as h:
        _, alice = await h.user("alice")
        room_id = await h.direct_room(alice)
        await _post(h, room_id, alice, "Mon chat s'appelle Réglisse")
        await h.services.jobs.drain()  # the exchange's turns indexed (after-reply job)
        services = h.services
        query = (await services.embedder.embed(["Mon chat s'appelle Réglisse"]))[0]

        async def turns_in_memory() -> int:
            async with services.database.session() as session:
                hits = await services.memory_vectors.search(
                    session,
                    collection="turn",
                    model=services.embedder.name,
                    keys=[room_key(room_id)],
                    query=query,
                    k=10,
                )
            return len(hits)

        assert await turns_in_memory() > 0
        deleted = await h.client.delete(f"/v1/rooms/{room_id}", headers=alice)
        assert deleted.status_code == 204
        assert await turns_in_memory() == 0
