"""The FastAPI application factory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import structlog
from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from eko import __version__
from eko.api.middleware import BodyLimitMiddleware, RequestIdMiddleware
from eko.api.problems import install_problem_handlers
from eko.api.routers import chat_engine, guard, health, memory, rooms, users
from eko.config import Settings
from eko.store.migrate import upgrade
from eko.wiring import Services, build_services

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
log = structlog.get_logger("eko.api")


def create_app(
    settings: Settings, *, services: Services | None = None, migrate: bool = True
) -> FastAPI:
    """Build the app. With `services` given (tests), the caller owns their lifetime."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = services is None
        app.state.services = services or build_services(settings)
        if migrate:
            await upgrade(app.state.services.database)
        log.info("eko.started", version=__version__, database=app.state.services.database.dialect)
        try:
            yield
        finally:
            if owned:
                await app.state.services.aclose()

    app = FastAPI(title="Eko", version=__version__, lifespan=lifespan)
    if services is not None:
        app.state.services = services
    install_problem_handlers(app)
    app.include_router(health.router)
    app.include_router(users.router)
    app.include_router(rooms.router)
    app.include_router(guard.router)
    app.include_router(memory.router)
    app.include_router(chat_engine.router)
    app.mount("/static", StaticFiles(directory=WEB_DIR), name="static")

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(WEB_DIR / "index.html")

    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(RequestIdMiddleware)
    return app
