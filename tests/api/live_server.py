"""A real Eko HTTP server (uvicorn on loopback, its own loop and thread) for protocol tests."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn

from eko.api.app import create_app
from eko.config import Settings
from eko.embed import Embedder
from eko.embed.hashing import HashEmbedder
from eko.llm.types import Provider
from eko.store import users as user_repo
from eko.store.db import Database
from eko.wiring import build_services
from tests.conftest import run_isolated


@dataclass(frozen=True)
class LiveEko:
    url: str
    key: str
    staff_key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_eko(
    database_url: str,
    providers: Sequence[Provider],
    *,
    with_users: bool = True,
    embedder: Embedder | None = None,
    **overrides: object,
) -> Iterator[LiveEko]:
    """The server, with a pro member ("Client", `.key`) and a staff member ("Root",
    `.staff_key`); with `with_users=False`, a fresh install with no user (keys "").
    `embedder`: the hashing one unless given (another process's must match it)."""
    overrides.setdefault("memory_extract_enabled", False)
    settings = Settings(database_url=database_url, _env_file=None, **overrides)  # type: ignore[arg-type]
    services = build_services(
        settings, providers=list(providers), embedder=embedder or HashEmbedder()
    )

    async def make_users() -> tuple[str, str]:
        # Its own engine: pooled asyncpg connections belong to the loop that opened them.
        database = Database(database_url)
        try:
            async with database.session() as session:
                _, key = await user_repo.create_user(session, display_name="Client", is_pro=True)
                _, staff = await user_repo.create_user(session, display_name="Root", role="staff")
                return key, staff
        finally:
            await database.dispose()

    key, staff_key = run_isolated(make_users()) if with_users else ("", "")
    port = _free_port()
    config = uvicorn.Config(
        create_app(settings, services=services, migrate=False),
        host="127.0.0.1",
        port=port,
        log_config=None,
        lifespan="off",
    )
    server = uvicorn.Server(config)

    async def serve_then_close() -> None:
        await server.serve()
        await services.chat.drain()
        await services.aclose()  # on the loop that owns the connections

    thread = threading.Thread(target=lambda: asyncio.run(serve_then_close()), daemon=True)
    thread.start()
    while not server.started:
        thread.join(0.05)
    try:
        yield LiveEko(f"http://127.0.0.1:{port}", key, staff_key)
    finally:
        server.should_exit = True
        thread.join(15)
