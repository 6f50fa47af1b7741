"""GET /v1/rooms/{id}/export: a conversation as Markdown or JSON, for its members only."""

from __future__ import annotations

from tests.api.conftest import HarnessFactory

PROBLEM = "application/problem+json"


async def test_export_as_markdown_and_json(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, alice = await h.user("Alice")
        room_id = await h.direct_room(alice, name="Voyage à Lyon")
        turns = [
            {"role": "user", "content": "On part quand ?"},
            {"role": "assistant", "content": "Samedi, **8 h**."},
            {"role": "user", "content": "Et Caroline ?", "name": "Caroline"},
        ]
        imported = await h.client.post(
            f"/v1/rooms/{room_id}/messages:import", json={"messages": turns}, headers=alice
        )
        assert imported.status_code in (200, 201), imported.text

        md = await h.client.get(f"/v1/rooms/{room_id}/export", headers=alice)
        assert md.status_code == 200, md.text
        assert md.headers["content-type"].startswith("text/markdown")
        assert 'filename="voyage-a-lyon.md"' in md.headers["content-disposition"]
        text = md.text
        assert text.startswith("# Voyage à Lyon\n")
        assert "3 messages" in text
        order = [
            text.index(s)
            for s in ("**Alice**", "On part quand ?", "**Eko**", "Samedi, **8 h**.", "**Caroline**")
        ]
        assert order == sorted(order)

        js = await h.client.get(
            f"/v1/rooms/{room_id}/export", params={"format": "json"}, headers=alice
        )
        assert js.status_code == 200 and js.headers["content-type"].startswith("application/json")
        body = js.json()
        assert body["room"]["id"] == room_id and body["room"]["title"] == "Voyage à Lyon"
        assert [(m["seq"], m["role"], m["speaker"], m["content"]) for m in body["messages"]] == [
            (1, "user", "Alice", "On part quand ?"),
            (2, "assistant", "Eko", "Samedi, **8 h**."),
            (3, "user", "Caroline", "Et Caroline ?"),
        ]


async def test_export_is_for_members_only_and_checks_its_format(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        _, alice = await h.user("Alice")
        _, bob = await h.user("Bob")
        _, staff = await h.user("Root", role="staff")
        room_id = await h.direct_room(alice)
        for headers in (bob, staff):
            response = await h.client.get(f"/v1/rooms/{room_id}/export", headers=headers)
            assert response.status_code == 404
            assert response.headers["content-type"].startswith(PROBLEM)
        missing = await h.client.get("/v1/rooms/nope/export", headers=alice)
        assert missing.status_code == 404
        bad = await h.client.get(f"/v1/rooms/{room_id}/export?format=pdf", headers=alice)
        assert bad.status_code == 422 and bad.headers["content-type"].startswith(PROBLEM)
        empty = await h.client.get(f"/v1/rooms/{room_id}/export?format=json", headers=alice)
        assert empty.status_code == 200 and empty.json()["messages"] == []
        assert (await h.client.get(f"/v1/rooms/{room_id}/export")).status_code == 401
