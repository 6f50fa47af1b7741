"""A reflection's live phases seen by a client of `/v1/events` (SSE, real sockets)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from eko.llm.providers import FunctionModel
from eko.memory.items import NewItem
from eko.memory.scopes import room_key
from tests.events.conftest import Live, LiveFactory
from tests.lobby.kit import ScriptedReflection


async def read_reflection_events(
    server: Live, token: str, connected: asyncio.Event
) -> list[dict[str, Any]]:
    """Every reflection event until the `reflection:update` that follows the phase `done`."""
    seen: list[dict[str, Any]] = []
    async with server.client.stream(
        "GET", f"/v1/events?token={token}", headers={"Accept": "text/event-stream"}
    ) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line == ": connected":  # sent once the subscription is in place
                connected.set()
            if not line.startswith("data: "):
                continue
            event = json.loads(line.removeprefix("data: "))
            if event["type"].startswith("reflection:"):
                seen.append(event)
                if event["type"] == "reflection:update":
                    return seen
    return seen


async def test_a_member_sees_the_reflection_phases_live_and_another_user_sees_nothing(
    live: LiveFactory,
) -> None:
    script = ScriptedReflection(tone="playful")
    # No periodic summary or opportunity path racing the trigger: only its phases are seen.
    async with live(providers=[FunctionModel(script)], lobby_proactive_enabled=False) as server:
        _, alice = await server.user("alice")
        _, mallory = await server.user("mallory")
        lobby = (
            await server.client.post("/v1/rooms", json={"kind": "lobby"}, headers=alice)
        ).json()
        await server.services.memory.items.remember(
            NewItem(kind="goal", subject="Kraken FM", content="C'est quoi exactement Kraken FM ?"),
            scope=room_key(lobby["id"]),
        )
        await server.client.post(
            f"/v1/rooms/{lobby['id']}/messages", json={"content": "on merge ?"}, headers=alice
        )
        alice_token = (await server.client.post("/v1/events/token", headers=alice)).json()["token"]
        mallory_token = (await server.client.post("/v1/events/token", headers=mallory)).json()[
            "token"
        ]
        connected = asyncio.Event(), asyncio.Event()
        watcher = asyncio.create_task(read_reflection_events(server, alice_token, connected[0]))
        outsider = asyncio.create_task(read_reflection_events(server, mallory_token, connected[1]))
        await asyncio.wait_for(asyncio.gather(connected[0].wait(), connected[1].wait()), 10)

        triggered = await server.client.post(
            f"/v1/rooms/{lobby['id']}/reflection/trigger", headers=alice
        )
        assert triggered.status_code == 200, triggered.text
        seen = await asyncio.wait_for(watcher, 15)
        await asyncio.sleep(0.3)
        assert not outsider.done()  # not a member: no reflection event of this lobby reached it
        outsider.cancel()

    phases = [e["data"]["phase"] for e in seen if e["type"] == "reflection:phase"]
    assert phases == ["gathering", "context", "thinking", "done"]
    assert all(e["room_id"] == lobby["id"] for e in seen)
    done = [e for e in seen if e["type"] == "reflection:phase"][-1]
    assert done["data"]["action"] == "message"
    update = seen[-1]["data"]
    assert update["stats"]["message_count"] == 1
    # One reflection prompt (the periodic activity summary may also run in this process).
    assert sum("## TA CURIOSITÉ" in prompt for prompt in script.prompts) == 1
