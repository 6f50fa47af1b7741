"""The memory routes: items (add with dedup, list, search, delete), summaries, topics, context."""

from __future__ import annotations

import json

from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from tests.api.conftest import HarnessFactory

from .conftest import Summarizer, schema_title

PROBLEM = "application/problem+json"


async def test_items_add_dedup_list_filter_and_delete(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, alice = await h.user("alice")
        _, staff = await h.user("root", role="staff")
        lobby = (await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=alice)).json()
        c = h.client
        goal = {
            "kind": "goal",
            "subject": "Corentin",
            "content": "Qui est Corentin ?",
            "scope": f"room:{lobby['id']}",
        }
        first = await c.post("/v1/memory/items", json=goal, headers=alice)
        again = await c.post("/v1/memory/items", json=goal, headers=alice)
        fact = await c.post(
            "/v1/memory/items",
            headers=alice,
            json={"kind": "fact", "subject": "Kraken", "content": "Kraken FM est une radio"},
        )
        assert first.status_code == again.status_code == fact.status_code == 201
        assert first.json()["created"] and not again.json()["created"]
        assert again.json()["item"]["mention_count"] == 2
        assert again.json()["item"]["status"] == "open"

        goals = (await c.get("/v1/memory/items", params={"kind": "goal"}, headers=alice)).json()
        open_goals = (
            await c.get("/v1/memory/items", params={"status": "open"}, headers=alice)
        ).json()
        lobby_only = (
            await c.get("/v1/memory/items", params={"scope": f"room:{lobby['id']}"}, headers=alice)
        ).json()
        found = (
            await c.get(
                "/v1/memory/items/search",
                params={"q": "Kraken FM radio", "kind": "fact"},
                headers=alice,
            )
        ).json()
        assert [g["content"] for g in goals] == ["Qui est Corentin ?"]
        assert [g["id"] for g in open_goals] == [g["id"] for g in goals]
        assert [i["kind"] for i in lobby_only] == ["goal"]
        assert [hit["item"]["subject"] for hit in found] == ["Kraken"]
        assert 0 < found[0]["score"] <= 1

        global_item = await c.post(
            "/v1/memory/items",
            headers=staff,
            json={"kind": "self", "content": "Je suis Eko", "scope": "global"},
        )
        assert global_item.status_code == 201
        member_global = await c.post(
            "/v1/memory/items",
            headers=alice,
            json={"kind": "self", "content": "x", "scope": "global"},
        )
        assert member_global.status_code == 403
        # A member reads global items but only staff deletes them.
        gid = global_item.json()["item"]["id"]
        assert (await c.get(f"/v1/memory/items/{gid}", headers=alice)).status_code == 200
        assert (await c.delete(f"/v1/memory/items/{gid}", headers=alice)).status_code == 403
        assert (await c.delete(f"/v1/memory/items/{gid}", headers=staff)).status_code == 204
        fid = fact.json()["item"]["id"]
        assert (await c.delete(f"/v1/memory/items/{fid}", headers=alice)).status_code == 204
        assert (await c.get(f"/v1/memory/items/{fid}", headers=alice)).status_code == 404


async def test_bad_input_is_a_problem_and_stores_nothing(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, alice = await h.user("alice")
        c = h.client
        bad = [
            {"kind": "opinion", "content": "x"},
            {"kind": "fact", "content": ""},
            {"kind": "fact", "content": "x" * 2001},
            {"kind": "fact", "content": "x", "scope": "planet:mars"},
            {"kind": "fact", "content": "x", "surprise": True},
        ]
        for body in bad:
            response = await c.post("/v1/memory/items", json=body, headers=alice)
            assert response.status_code in (403, 422), (body, response.text)
            assert response.headers["content-type"] == PROBLEM
        blank = await c.post(
            "/v1/memory/items", json={"kind": "fact", "content": "   "}, headers=alice
        )
        assert blank.status_code == 422
        assert (await c.get("/v1/memory/items", headers=alice)).json() == []
        bad_queries: list[dict[str, str | int]] = [
            {"q": ""},
            {"q": "x", "k": 0},
            {"q": "x", "kind": "nope"},
        ]
        for params in bad_queries:
            response = await c.get("/v1/memory/items/search", params=params, headers=alice)
            assert response.status_code == 422
        assert (await c.get("/v1/memory/items")).status_code == 401


async def test_summaries_topics_search_and_context_routes(make_harness: HarnessFactory) -> None:
    topics = {1: ["Jardin potager"], 2: ["Potager"], 3: ["Vacances"]}
    summarizer = Summarizer(
        topics=lambda n, r: topics.get(n, []),
        same_topics=lambda n, r: [
            {"first": "Jardin potager", "second": "Potager", "confidence": 0.9}
        ],
    )

    def model(request: ProviderRequest) -> str:
        if schema_title(request) in ("L1Summary", "HigherSummary"):
            return summarizer(request)
        if schema_title(request) == "MemoryExtraction":
            return json.dumps({"items": [], "answered_goals": []})
        return "r".ljust(150, "r")

    async with make_harness(providers=[FunctionModel(model)], summarize_every_n_chars=300) as h:
        _, alice = await h.user("alice")
        room = await h.direct_room(alice)
        c = h.client
        for i in range(5):
            await c.post(
                f"/v1/rooms/{room}/messages",
                headers=alice,
                json={"content": f"tomates {i} ".ljust(150, "t")},
            )
            await h.services.jobs.drain()

        l1 = (await c.get(f"/v1/rooms/{room}/summaries", params={"level": 1}, headers=alice)).json()
        listed_topics = (await c.get(f"/v1/rooms/{room}/topics", headers=alice)).json()
        in_topic = (
            await c.get(
                f"/v1/rooms/{room}/summaries/search",
                params={"q": "conv", "topic": "potager"},
                headers=alice,
            )
        ).json()
        unknown = await c.get(
            f"/v1/rooms/{room}/summaries/search",
            params={"q": "conv", "topic": "inconnu"},
            headers=alice,
        )
        context = (
            await c.get(f"/v1/rooms/{room}/context", params={"q": "tomates"}, headers=alice)
        ).json()
        topic_hits = (
            await c.get(f"/v1/rooms/{room}/topics/search", params={"q": "potager"}, headers=alice)
        ).json()

    # 5 exchanges of 2 × 150 characters: 5 L1 (and one L2 over the first three).
    assert [(s["char_range_start"], s["char_range_end"]) for s in l1] == [
        (i * 300, (i + 1) * 300) for i in range(5)
    ]
    assert l1[0]["topics"] == ["Jardin potager"] and l1[0]["metadata"]["provider"] == "function"
    by_name = {t["name"]: t for t in listed_topics}
    assert set(by_name) == {"Jardin potager", "Vacances"}
    assert by_name["Jardin potager"]["aliases"] == ["Potager"]
    assert by_name["Jardin potager"]["summary_count"] == 2
    assert sorted(s["char_range_start"] for s in in_topic) == [0, 300]
    assert all(s["similarity"] is not None for s in in_topic)
    assert unknown.status_code == 404 and unknown.headers["content-type"] == PROBLEM
    assert context["text"].startswith("## Recent Conversation")
    assert context["stats"]["recent_turns"] == 5
    assert set(context["parts"]) == {"recent", "summaries", "items", "recalled"}
    # "Potager" merged into "Jardin potager": one canonical hit, found by either name.
    assert [hit["name"] for hit in topic_hits][:1] == ["Jardin potager"]
    assert [hit["name"] for hit in topic_hits].count("Jardin potager") == 1
