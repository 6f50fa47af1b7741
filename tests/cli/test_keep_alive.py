"""`eko serve`'s uvicorn options, through a real socket: an idle keep-alive connection stays
open for EKO_HTTP_KEEP_ALIVE_S, so a client reusing it is not cut off by the server."""

from __future__ import annotations

import asyncio
import socket

import uvicorn
from fastapi import FastAPI

from eko.cli.serve import server_options
from eko.config import Settings

REQUEST = b"GET /ping HTTP/1.1\r\nHost: test\r\n\r\n"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _open_after_idle(keep_alive_s: int, idle_s: float) -> bool:
    """Whether a second request on the same connection is answered after `idle_s`."""
    app = FastAPI()
    app.get("/ping")(lambda: {"ok": True})
    settings = Settings(port=_free_port(), http_keep_alive_s=keep_alive_s, _env_file=None)
    server = uvicorn.Server(uvicorn.Config(app, **server_options(settings)))
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:  # noqa: ASYNC110 - uvicorn exposes a flag, not an event
            await asyncio.sleep(0.05)
        reader, writer = await asyncio.open_connection(settings.host, settings.port)
        writer.write(REQUEST)
        assert b"200 OK" in await reader.read(4096)
        await asyncio.sleep(idle_s)
        writer.write(REQUEST)
        answer = await asyncio.wait_for(reader.read(4096), timeout=5)
        writer.close()
        return b"200 OK" in answer
    finally:
        server.should_exit = True
        await serving


async def test_an_idle_connection_stays_open_for_the_configured_time() -> None:
    assert await _open_after_idle(keep_alive_s=4, idle_s=1.5)
    # And the option is what decides: with 1 s the server has closed it.
    assert not await _open_after_idle(keep_alive_s=1, idle_s=1.5)


def test_the_default_outlasts_clients_and_proxies_idle_timeouts() -> None:
    assert server_options(Settings(_env_file=None))["timeout_keep_alive"] > 60
