"""A browser's event token (`/v1/events?token=`) is never written in full to the server log,
and a stream opened with it ends when it expires (issue #32); both through a real server."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from eko.events import tokens
from eko.logging import configure_logging
from eko.store import users as user_repo
from tests.events.conftest import Live, LiveFactory
from tests.events.test_live import next_json

SSE = {"Accept": "text/event-stream"}


async def short_token(server: Live, key: str, *, ttl_s: int = 5) -> tuple[str, int]:
    """A real token for this key's user that expires within `ttl_s` seconds."""
    async with server.services.database.session() as session:
        user = await user_repo.get_by_api_key(session, api_key=key)
    assert user is not None
    return tokens.issue(user, ttl_s=ttl_s)


async def sse_events(server: Live, token: str) -> list[dict[str, Any]]:
    """Every event of a stream opened with `token`, until the server ends it."""
    seen: list[dict[str, Any]] = []
    async with server.client.stream("GET", f"/v1/events?token={token}", headers=SSE) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                seen.append(json.loads(line.removeprefix("data: ")))
    return seen


async def test_a_server_sent_events_stream_ends_when_its_token_expires(
    live: LiveFactory,
) -> None:
    # The default keep-alive (15 s) is far longer than the token's life: the stream must not
    # wait for the next keep-alive to notice.
    async with live() as server:
        key, _headers = await server.user("alice")
        token, expires = await short_token(server, key)
        seen = await asyncio.wait_for(sse_events(server, token), 20)
        assert time.time() >= expires
        assert seen[-1]["type"] == "stream.expired"
        assert seen[-1]["data"]["reason"] == "token_expired"
        # Reconnecting with the same token is refused: the browser asks for a new one.
        again = await server.client.get(f"/v1/events?token={token}", headers=SSE)
        assert again.status_code == 401


async def test_a_websocket_opened_with_a_token_is_closed_when_it_expires(
    live: LiveFactory,
) -> None:
    async with live(events_keepalive_s=60) as server:
        key, _headers = await server.user("alice")
        token, expires = await short_token(server, key)
        async with websockets.connect(f"{server.ws}/v1/events?token={token}") as ws:
            assert (await next_json(ws))["type"] == "stream.connected"
            notice = await next_json(ws, wait_s=20)
            assert notice["type"] == "stream.expired"
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 5)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401
        assert time.time() >= expires


async def test_a_stream_opened_with_an_api_key_is_not_cut(live: LiveFactory) -> None:
    async with live(events_keepalive_s=0.2) as server:
        key, headers = await server.user("alice")
        async with websockets.connect(f"{server.ws}/v1/events", additional_headers=headers) as ws:
            assert (await next_json(ws))["type"] == "stream.connected"
            for _ in range(3):
                assert (await next_json(ws))["type"] == "stream.keepalive"
        assert key


async def test_the_server_log_never_holds_a_token_in_full(
    live: LiveFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging("INFO")
    # As `eko serve` logs (log_config None; uvicorn's loggers at the root's INFO, set here as
    # other tests' servers left them at WARNING), with uvicorn's access log on as well: an
    # operator running the app under uvicorn directly gets those lines.
    options = {"log_level": "info", "access_log": True}
    try:
        async with live(uvicorn_options=options) as server:
            _key, alice = await server.user("alice")
            issued = await server.client.post("/v1/events/token", headers=alice)
            token = issued.json()["token"]
            async with server.client.stream(
                "GET", f"/v1/events?token={token}", headers=SSE
            ) as response:
                assert response.status_code == 200
            async with websockets.connect(f"{server.ws}/v1/events?token={token}") as ws:
                assert (await next_json(ws))["type"] == "stream.connected"
            bad = await server.client.get(f"/v1/events?token={token}x", headers=SSE)
            assert bad.status_code == 401
    finally:
        logging.getLogger().handlers.clear()
    err = capsys.readouterr().err
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    urls = [line["event"] for line in lines if "/v1/events?token=" in str(line["event"])]
    # The lines are there (uvicorn's WebSocket and access lines), with the token cut short.
    assert any("WebSocket" in url for url in urls), urls
    assert any("GET" in url for url in urls), urls
    assert all(f"token={token[:4]}…" in url for url in urls), urls
    assert token not in err
    assert token[:12] not in err
