"""A real server on loopback (uvicorn, same event loop as the test) over the current backend."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn

from eko.api.app import create_app
from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.llm.providers import FunctionModel
from eko.llm.types import Provider
from eko.store import users as user_repo
from eko.store.db import Database
from eko.wiring import Services, build_services


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Live:
    http: str
    ws: str
    client: httpx.AsyncClient
    services: Services

    async def user(self, name: str) -> tuple[str, dict[str, str]]:
        async with self.services.database.session() as session:
            _user, key = await user_repo.create_user(
                session, display_name=name, role="member", is_pro=True
            )
        return key, {"Authorization": f"Bearer {key}"}

    async def room(self, headers: dict[str, str]) -> str:
        response = await self.client.post("/v1/rooms", json={"kind": "direct"}, headers=headers)
        assert response.status_code == 201, response.text
        return str(response.json()["id"])


# What the `live` fixture gives: `async with live(**settings_overrides) as server: ...`.
LiveFactory = Callable[..., AbstractAsyncContextManager[Live]]


@asynccontextmanager
async def serve(
    database: Database,
    *,
    providers: list[Provider] | None = None,
    uvicorn_options: dict[str, Any] | None = None,
    **overrides: Any,
) -> AsyncIterator[Live]:
    """`uvicorn_options` replace the quiet defaults (log_level warning) of the test server."""
    overrides.setdefault("memory_extract_enabled", False)
    settings = Settings(database_url=database.url, _env_file=None, **overrides)
    services = build_services(
        settings,
        providers=providers or [FunctionModel.constant("Bonjour, je suis Eko.")],
        embedder=HashEmbedder(),
        database=database,
    )
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings, services=services, migrate=False),
            host="127.0.0.1",
            port=port,
            **{"log_config": None, "log_level": "warning", **(uvicorn_options or {})},
            lifespan="off",
        )
    )
    await services.jobs.start()  # as `eko serve` does: this process runs jobs too
    task = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn exposes a flag, not an event
        await asyncio.sleep(0.01)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            yield Live(f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}", client, services)
    finally:
        server.should_exit = True
        await task
        await services.chat.drain()
        await services.jobs.drain()
        await services.jobs.aclose()
        await services.events.aclose()


@pytest.fixture
def live(database: Database) -> LiveFactory:
    def factory(**overrides: Any) -> AbstractAsyncContextManager[Live]:
        return serve(database, **overrides)

    return factory
