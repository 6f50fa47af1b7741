"""/v1/events through real sockets: the `websockets` client and httpx, on both backends."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from tests.events.conftest import LiveFactory


async def next_json(ws: Any, *, wait_s: float = 10.0) -> dict[str, Any]:
    return dict(json.loads(await asyncio.wait_for(ws.recv(), wait_s)))


async def collect_until(
    ws: Any, done: Callable[[list[dict[str, Any]]], bool], *, wait_s: float = 15.0
) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while not done(seen):
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise AssertionError(f"never happened; saw {[e['type'] for e in seen]}")
        try:
            seen.append(await next_json(ws, wait_s=remaining))
        except TimeoutError:
            continue
    return seen


def message_events(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in seen if e["type"] == "message.created"]


async def test_a_websocket_client_sees_its_rooms_and_never_another_users(
    live: LiveFactory,
) -> None:
    async with live() as server:
        key_a, alice = await server.user("alice")
        key_b, bob = await server.user("bob")
        room_a = await server.room(alice)
        room_b = await server.room(bob)
        async with (
            websockets.connect(
                f"{server.ws}/v1/events", additional_headers={"Authorization": f"Bearer {key_a}"}
            ) as ws_a,
            websockets.connect(
                f"{server.ws}/v1/events", additional_headers={"Authorization": f"Bearer {key_b}"}
            ) as ws_b,
        ):
            assert (await next_json(ws_a))["type"] == "stream.connected"
            assert (await next_json(ws_b))["type"] == "stream.connected"
            posted = await server.client.post(
                f"/v1/rooms/{room_a}/messages", json={"content": "Bonjour !"}, headers=alice
            )
            assert posted.status_code == 201
            seen = await collect_until(
                ws_a,
                lambda s: (
                    len(message_events(s)) == 2 and any(e["type"] == "job.succeeded" for e in s)
                ),
            )
            roles = [e["data"]["message"]["role"] for e in message_events(seen)]
            assert roles == ["user", "assistant"]
            assert {e["room_id"] for e in seen} == {room_a}
            assert message_events(seen)[1]["data"]["message"]["content"] == "Bonjour, je suis Eko."

            # Bob's own room reaches Bob; nothing of Alice's ever did.
            await server.client.post(
                f"/v1/rooms/{room_b}/messages", json={"content": "Salut"}, headers=bob
            )
            bob_seen = await collect_until(ws_b, lambda s: len(message_events(s)) == 2)
            assert {e["room_id"] for e in bob_seen} == {room_b}


async def test_server_sent_events_on_the_same_path_with_a_browser_token(
    live: LiveFactory,
) -> None:
    async with live() as server:
        _key, alice = await server.user("alice")
        room = await server.room(alice)
        issued = await server.client.post("/v1/events/token", headers=alice)
        assert issued.status_code == 201
        token = issued.json()["token"]

        async def read_two_messages() -> list[dict[str, Any]]:
            events: list[dict[str, Any]] = []
            async with server.client.stream(
                "GET", f"/v1/events?token={token}", headers={"Accept": "text/event-stream"}
            ) as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        event = json.loads(line.removeprefix("data: "))
                        if event["type"] == "message.created":
                            events.append(event)
                            if len(events) == 2:
                                return events
            return events

        reader = asyncio.create_task(read_two_messages())
        await asyncio.sleep(0.3)  # connected before the post
        await server.client.post(
            f"/v1/rooms/{room}/messages", json={"content": "Bonjour"}, headers=alice
        )
        events = await asyncio.wait_for(reader, 15)
        assert [e["data"]["role"] for e in events] == ["user", "assistant"]
        assert all(e["room_id"] == room for e in events)


async def test_events_refuse_missing_bad_or_forged_credentials(live: LiveFactory) -> None:
    async with live() as server:
        key, alice = await server.user("alice")
        sse = {"Accept": "text/event-stream"}
        assert (await server.client.get("/v1/events", headers=sse)).status_code == 401
        bad = {**sse, "Authorization": "Bearer eko_nope"}
        assert (await server.client.get("/v1/events", headers=bad)).status_code == 401
        token = (await server.client.post("/v1/events/token", headers=alice)).json()["token"]
        public_id, expires, signature = token.split(".")
        forged = f"{public_id}.{int(expires) + 3600}.{signature}"
        response = await server.client.get(f"/v1/events?token={forged}", headers=sse)
        assert response.status_code == 401
        # Plain GET (no event-stream accepted, no upgrade): told how to use it.
        plain = await server.client.get("/v1/events", headers=alice)
        assert plain.status_code == 406
        assert plain.json()["type"] == "urn:eko:problem:not-acceptable"
        with pytest.raises(InvalidStatus):
            async with websockets.connect(f"{server.ws}/v1/events"):
                pass
        with pytest.raises(InvalidStatus):
            async with websockets.connect(f"{server.ws}/v1/events?token={forged}"):
                pass
        async with websockets.connect(f"{server.ws}/v1/events?token={token}") as ws:
            assert (await next_json(ws))["type"] == "stream.connected"
        assert key  # the key itself works as a header (previous test)


async def test_the_token_route_needs_an_api_key(live: LiveFactory) -> None:
    async with live() as server:
        response = await server.client.post("/v1/events/token")
        assert response.status_code == 401
        assert isinstance(response, httpx.Response)
