"""Eko served in this process for a bench that asks through the API: a fresh SQLite database in
a temp dir, the settings' overrides applied, the memory guard off (every message must reach
the writer), the model warmed up, background jobs running and drained at the end."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager

import httpx

from eko.api.app import create_app
from eko.config import Settings
from eko.embed import Embedder
from eko.llm.types import Provider
from eko.store.migrate import upgrade
from eko.wiring import Services, build_services


@asynccontextmanager
async def served_in_process(
    base: Settings,
    overrides: Mapping[str, object],
    *,
    providers: Sequence[Provider] | None,
    embedder: Embedder | None,
    prefix: str,
) -> AsyncIterator[tuple[httpx.AsyncClient, Services]]:
    with tempfile.TemporaryDirectory(prefix=prefix) as home:
        settings = base.model_copy(
            update={
                "database_url": f"sqlite+aiosqlite:///{home}/eko.db",
                "guard_enabled": False,
                **overrides,
            }
        )
        services = build_services(settings, providers=providers, embedder=embedder)
        try:
            await upgrade(services.database)
            if settings.local_warm_up:
                await services.warm_up()
            await services.jobs.start()
            app = create_app(settings, services=services, migrate=False)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://eko_bench", timeout=900
            ) as client:
                yield client, services
            await services.jobs.drain()
        finally:
            await services.aclose()
