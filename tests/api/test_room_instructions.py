"""Per-conversation instructions (PATCH /v1/rooms/{id}): stored on the room, given to the
writer as an OpenAI client's system message is, and kept out of the memory guard."""

from __future__ import annotations

from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from tests.api.conftest import HarnessFactory

PROBLEM = "application/problem+json"
RULE = "Réponds toujours en alexandrins, CONSIGNE-ZEBRE."


def _writer_system(request: ProviderRequest) -> str:
    return request.messages[0].content


async def test_instructions_reach_the_writer_and_are_never_learned(
    make_harness: HarnessFactory,
) -> None:
    model = FunctionModel(lambda request: "not json" if request.json_schema else "Fort bien.")
    async with make_harness(providers=[model]) as h:
        _, alice = await h.user("alice")
        room_id = await h.direct_room(alice, name="Poésie")
        updated = await h.client.patch(
            f"/v1/rooms/{room_id}", json={"instructions": f"  {RULE}  "}, headers=alice
        )
        assert updated.status_code == 200, updated.text
        assert updated.json()["instructions"] == RULE and updated.json()["name"] == "Poésie"
        shown = (await h.client.get(f"/v1/rooms/{room_id}", headers=alice)).json()
        assert shown["instructions"] == RULE

        sent = await h.client.post(
            f"/v1/rooms/{room_id}/messages", json={"content": "Bonjour"}, headers=alice
        )
        reply = sent.json()["assistant_message"]
        writer = [r for r in model.requests if r.json_schema is None][-1]
        assert RULE in _writer_system(writer)
        assert reply["metadata"]["caller_instructions"] is True
        rated = await h.client.post(
            f"/v1/messages/{reply['id']}/feedback", json={"rating": "up"}, headers=alice
        )
        assert rated.json()["learned"] is False
        assert rated.json()["refused"] == "caller_instructions"

        # Cleared: the next reply is written without them.
        cleared = await h.client.patch(
            f"/v1/rooms/{room_id}", json={"instructions": ""}, headers=alice
        )
        assert cleared.json()["instructions"] is None
        await h.client.post(
            f"/v1/rooms/{room_id}/messages", json={"content": "Et maintenant ?"}, headers=alice
        )
        writer = [r for r in model.requests if r.json_schema is None][-1]
        assert "CONSIGNE-ZEBRE" not in _writer_system(writer)


async def test_room_update_checks_its_fields(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, alice = await h.user("alice")
        _, bob = await h.user("bob")
        room_id = await h.direct_room(alice)
        path = f"/v1/rooms/{room_id}"
        for body in ({}, {"name": " "}, {"name": None}, {"instructions": "x" * 4001}, {"x": 1}):
            response = await h.client.patch(path, json=body, headers=alice)
            assert response.status_code == 422, (body, response.text)
            assert response.headers["content-type"].startswith(PROBLEM)
        renamed = await h.client.patch(path, json={"name": "Neuf"}, headers=alice)
        assert renamed.json()["name"] == "Neuf" and renamed.json()["instructions"] is None
        assert (
            await h.client.patch(path, json={"instructions": "x"}, headers=bob)
        ).status_code == 404
