"""An app wired to the current backend's database with a scripted model and a hash embedder."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass

import httpx
import pytest

from eko.api.app import create_app
from eko.config import Settings
from eko.embed.base import Embedder
from eko.embed.hashing import HashEmbedder
from eko.llm.providers import FunctionModel
from eko.llm.types import Provider
from eko.store import users as user_repo
from eko.store.db import Database
from eko.wiring import Services, build_services


@dataclass
class Harness:
    client: httpx.AsyncClient
    services: Services
    settings: Settings

    async def user(
        self, name: str = "alice", *, role: str = "member"
    ) -> tuple[str, dict[str, str]]:
        async with self.services.database.session() as session:
            user, key = await user_repo.create_user(session, display_name=name, role=role)
            return user.public_id, {"Authorization": f"Bearer {key}"}

    async def direct_room(self, headers: dict[str, str], **body: str) -> str:
        response = await self.client.post(
            "/v1/rooms", json={"kind": "direct", **body}, headers=headers
        )
        assert response.status_code == 201, response.text
        room_id: str = response.json()["id"]
        return room_id


# What the `make_harness` fixture gives: `async with make_harness(providers=[...]) as h: ...`.
HarnessFactory = Callable[..., AbstractAsyncContextManager[Harness]]


@pytest.fixture
def make_harness(database: Database) -> HarnessFactory:
    """Call as `async with make_harness(providers=[...]) as h:` (default: a constant model)."""

    @asynccontextmanager
    async def factory(
        providers: Sequence[Provider] | None = None,
        embedder: Embedder | None = None,
        **settings_overrides: object,
    ) -> AsyncIterator[Harness]:
        # Memory extraction makes one model call after every reply: off unless a test asks for
        # it, so other tests' scripted models and call counts stay theirs.
        settings_overrides.setdefault("memory_extract_enabled", False)
        settings = Settings(database_url=database.url, _env_file=None, **settings_overrides)  # type: ignore[arg-type]
        services = build_services(
            settings,
            providers=providers or [FunctionModel.constant("Bonjour, je suis Eko.")],
            embedder=embedder or HashEmbedder(),
            database=database,
        )
        app = create_app(settings, services=services, migrate=False)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://eko.test") as client:
            try:
                yield Harness(client, services, settings)
            finally:
                # After-reply work still running would hold a transaction open into the next
                # test, whose TRUNCATE (a sync fixture, blocking this loop) then waits forever.
                await services.jobs.drain()
                await services.jobs.aclose()
                await services.memory_vectors.aclose()
                await services.events.aclose()

    return factory
