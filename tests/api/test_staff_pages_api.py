"""What the staff pages and the lobby's status bar read: a memory item's source turn, and the
day's reflection counters of a lobby (both backends)."""

from __future__ import annotations

from eko.llm.providers import FunctionModel
from eko.memory.items import NewItem
from eko.memory.scopes import GLOBAL, room_key
from tests.api.conftest import HarnessFactory
from tests.lobby.kit import ScriptedReflection


async def test_a_memory_items_source_turn_is_shown_to_who_may_see_its_room(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(providers=[FunctionModel.constant("Noté, Besançon.")]) as h:
        alice_id, alice = await h.user("alice")
        _, bob = await h.user("bob")
        _, staff = await h.user("root", role="staff")
        room_id = await h.direct_room(alice)
        posted = await h.client.post(
            f"/v1/rooms/{room_id}/messages",
            json={"content": "Le village de maman, c'est Besançon."},
            headers=alice,
        )
        assert posted.status_code == 201, posted.text
        exchange = posted.json()
        written = await h.services.memory.items.remember(
            NewItem(
                kind="fact",
                subject="maman",
                content="Le village de maman est Besançon",
                source_message_id=exchange["user_message"]["id"],
                source_room_id=room_id,
            ),
            scope=GLOBAL,
        )
        item_id = written.item.id
        without = await h.services.memory.items.remember(
            NewItem(kind="goal", subject="kraken", content="C'est quoi Kraken FM ?"),
            scope=room_key(room_id),
        )

        mine = await h.client.get(f"/v1/memory/items/{item_id}/sources", headers=alice)
        assert mine.status_code == 200, mine.text
        turns = mine.json()["turns"]
        assert [(t["role"], t["content"]) for t in turns] == [
            ("user", "Le village de maman, c'est Besançon."),
            ("assistant", "Noté, Besançon."),
        ]
        assert turns[0]["sender_public_id"] == alice_id
        assert turns[1]["id"] == exchange["assistant_message"]["id"]
        assert mine.json()["hidden"] is False

        # Staff see every source; bob sees the global fact but not alice's private room.
        by_staff = (await h.client.get(f"/v1/memory/items/{item_id}/sources", headers=staff)).json()
        assert [t["id"] for t in by_staff["turns"]] == [t["id"] for t in turns]
        by_bob = await h.client.get(f"/v1/memory/items/{item_id}/sources", headers=bob)
        assert by_bob.status_code == 200
        assert by_bob.json() == {"item_id": item_id, "turns": [], "hidden": True}

        # No source: no turns; an item out of sight (alice's room for bob) or missing: 404.
        none = await h.client.get(f"/v1/memory/items/{without.item.id}/sources", headers=alice)
        assert none.json() == {"item_id": without.item.id, "turns": [], "hidden": False}
        hidden = await h.client.get(f"/v1/memory/items/{without.item.id}/sources", headers=bob)
        assert hidden.status_code == 404
        assert hidden.headers["content-type"].startswith("application/problem+json")
        missing = await h.client.get("/v1/memory/items/nope/sources", headers=staff)
        assert missing.status_code == 404


async def test_the_reflection_status_counts_todays_reflections(
    make_harness: HarnessFactory,
) -> None:
    script = ScriptedReflection(tone="playful")
    async with make_harness(providers=[FunctionModel(script)]) as h:
        _, alice = await h.user("alice")
        lobby = (await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=alice)).json()
        base = f"/v1/rooms/{lobby['id']}/reflection"
        empty = (await h.client.get(f"{base}/status", headers=alice)).json()
        assert empty["today"]["reflections"] == 0 and empty["today"]["model_calls"] == 0

        # No curiosity: a pass without a model call.
        await h.client.post(f"{base}/trigger", headers=alice)
        await h.services.memory.items.remember(
            NewItem(kind="goal", subject="Kraken FM", content="C'est quoi exactement Kraken FM ?"),
            scope=room_key(lobby["id"]),
        )
        await h.client.post(
            f"/v1/rooms/{lobby['id']}/messages", json={"content": "on merge ?"}, headers=alice
        )
        spoke = (await h.client.post(f"{base}/trigger", headers=alice)).json()
        assert spoke["reflection"]["action"] == "message"

        status = (await h.client.get(f"{base}/status", headers=alice)).json()
        today = status["today"]
        assert (today["reflections"], today["messages"], today["passes"]) == (2, 1, 1)
        assert today["model_calls"] == script.calls == 1
        assert today["rate_limited"] == 0
        assert today["tokens"] == sum(r["llm_tokens"] for r in status["history"])
        assert today["day"] == status["history"][0]["timestamp"][:10]


async def test_a_lobbys_members_are_listed_to_its_members(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        alice_id, alice = await h.user("Alice")
        bob_id, bob = await h.user("Bob")
        _, carol = await h.user("Carol")
        lobby = (await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=alice)).json()
        added = await h.client.post(
            f"/v1/rooms/{lobby['id']}/members", json={"public_id": bob_id}, headers=alice
        )
        assert added.status_code == 204, added.text
        members = await h.client.get(f"/v1/rooms/{lobby['id']}/members", headers=bob)
        assert members.status_code == 200, members.text
        assert [(m["public_id"], m["display_name"]) for m in members.json()] == [
            (alice_id, "Alice"),
            (bob_id, "Bob"),
        ]
        outsider = await h.client.get(f"/v1/rooms/{lobby['id']}/members", headers=carol)
        assert outsider.status_code == 404
        assert outsider.headers["content-type"].startswith("application/problem+json")
