"""GET /v1/search: the caller's conversations by title and by message text (full-text index)."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import HarnessFactory

PROBLEM = "application/problem+json"


async def _import(h: Any, headers: dict[str, str], room_id: str, *texts: str) -> None:
    turns = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": text}
        for i, text in enumerate(texts)
    ]
    response = await h.client.post(
        f"/v1/rooms/{room_id}/messages:import", json={"messages": turns}, headers=headers
    )
    assert response.status_code in (200, 201), response.text


async def test_search_finds_own_messages_and_titles_only(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, alice = await h.user("alice")
        _, bob = await h.user("bob")
        _, staff = await h.user("root", role="staff")
        trip = await h.direct_room(alice, name="Voyage à Lyon")
        other = await h.direct_room(alice)
        await _import(h, alice, trip, "On part à Besançon en train ?", "Oui, départ à 8 h.")
        await _import(h, alice, other, "Une recette de crêpes", "Farine, œufs, lait.")
        bobs = await h.direct_room(bob)
        await _import(h, bob, bobs, "Besançon aussi pour moi", "Très bien.")

        found = (await h.client.get("/v1/search", params={"q": "besancon"}, headers=alice)).json()
        assert [(m["room_id"], m["role"]) for m in found["messages"]] == [(trip, "user")]
        hit = found["messages"][0]
        assert hit["room_title"] == "Voyage à Lyon" and "Besançon" in hit["snippet"]
        assert found["rooms"] == []

        # Every word is required, each as a prefix; titles match accent-insensitively.
        both = await h.client.get("/v1/search", params={"q": "Besançon tra"}, headers=alice)
        assert [m["room_id"] for m in both.json()["messages"]] == [trip]
        none = await h.client.get("/v1/search", params={"q": "Besançon farine"}, headers=alice)
        assert none.json()["messages"] == []
        titled = (await h.client.get("/v1/search", params={"q": "voyage a"}, headers=alice)).json()
        assert [r["id"] for r in titled["rooms"]] == [trip]
        # A room titled by its first message is found by that title.
        crepes = (await h.client.get("/v1/search", params={"q": "crêpes"}, headers=alice)).json()
        assert [r["id"] for r in crepes["rooms"]] == [other]
        assert [m["room_id"] for m in crepes["messages"]] == [other]

        # Bob sees his own message only; staff see only rooms they are members of.
        bob_found = await h.client.get("/v1/search", params={"q": "besancon"}, headers=bob)
        assert [m["room_id"] for m in bob_found.json()["messages"]] == [bobs]
        staff_found = await h.client.get("/v1/search", params={"q": "besancon"}, headers=staff)
        assert staff_found.json() == {"query": "besancon", "rooms": [], "messages": []}


async def test_search_refuses_bad_queries_as_problems(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, alice = await h.user("alice")
        bad: list[dict[str, str | int]] = [
            {},
            {"q": ""},
            {"q": "   "},
            {"q": "x" * 501},
            {"q": "a", "limit": 0},
        ]
        for params in bad:
            response = await h.client.get("/v1/search", params=params, headers=alice)
            assert response.status_code == 422, (params, response.text)
            assert response.headers["content-type"].startswith(PROBLEM)
        # Syntax of either index is taken literally, and stop words alone find nothing.
        for q in ('"OR" NOT (', "a:* & !b", "the and of"):
            response = await h.client.get("/v1/search", params={"q": q}, headers=alice)
            assert response.status_code == 200, (q, response.text)
            assert response.json()["messages"] == []
        assert (await h.client.get("/v1/search", params={"q": "x"})).status_code == 401
