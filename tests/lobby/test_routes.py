"""The reflection routes through the real stack (app, services, database)."""

from __future__ import annotations

import pytest

from eko.llm.providers import FunctionModel
from eko.memory.items import NewItem
from eko.memory.scopes import room_key
from tests.api.conftest import HarnessFactory
from tests.lobby.kit import ScriptedReflection

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])


async def test_trigger_status_and_stats_survive_a_restart(
    backend: str, make_harness: HarnessFactory
) -> None:
    script = ScriptedReflection(tone="technical")
    # Alice triggers twice in a row: no limit per user here (tests/lobby/test_manual_trigger.py).
    async with make_harness(providers=[FunctionModel(script)], reflection_manual_interval_s=0) as h:
        _, alice = await h.user("alice")
        _, bob = await h.user("bob")
        lobby = (await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=alice)).json()
        direct = await h.direct_room(alice)
        base = f"/v1/rooms/{lobby['id']}/reflection"
        # Members only (another user's room is not found), and only lobbies.
        assert (await h.client.get(f"{base}/status", headers=bob)).status_code == 404
        not_lobby = await h.client.post(f"/v1/rooms/{direct}/reflection/trigger", headers=alice)
        assert not_lobby.status_code == 409
        assert not_lobby.headers["content-type"].startswith("application/problem+json")
        await h.services.memory.items.remember(
            NewItem(kind="goal", subject="Kraken FM", content="C'est quoi exactement Kraken FM ?"),
            scope=room_key(lobby["id"]),
        )
        await h.client.post(
            f"/v1/rooms/{lobby['id']}/messages", json={"content": "on merge ?"}, headers=alice
        )
        response = await h.client.post(f"{base}/trigger", headers=alice)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["reflection"]["action"] == "message"
        assert body["reflection"]["tone"] == "technical"
        assert body["stats"]["message_count"] == 1
        # The question is the last message now: a second trigger skips, unless forced.
        again = (await h.client.post(f"{base}/trigger", headers=alice)).json()
        assert again["reflection"]["skipped"] == "last_message_is_assistant"
        status = (await h.client.get(f"{base}/status", headers=alice)).json()
        assert status["live"]["phase"] == "done"
        messages = (await h.client.get(f"/v1/rooms/{lobby['id']}/messages", headers=alice)).json()
    # A new process on the same database: the stats and history are still there.
    async with make_harness(providers=[FunctionModel(script)]) as h2:
        status = (await h2.client.get(f"{base}/status", headers=alice)).json()
    assert status["stats"]["total_reflections"] == 2
    assert status["stats"]["message_count"] == 1 and status["stats"]["pass_count"] == 1
    assert [r["action"] for r in status["history"]] == ["pass", "message"]
    assert status["live"] is None
    items = messages["items"]
    assert items[-1]["role"] == "assistant"
    assert items[-1]["content"] == "Au fait, C'est quoi exactement Kraken FM ?"
