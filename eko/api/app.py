"""The FastAPI application factory."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import structlog
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from eko import __version__
from eko.api.docs_assets import install_docs
from eko.api.heap import startup_objects_frozen
from eko.api.middleware import BodyLimitMiddleware, NulInUrlMiddleware, RequestIdMiddleware
from eko.api.openai_errors import OpenAIErrorShapeMiddleware
from eko.api.overload import install_overload_handlers
from eko.api.problems import install_problem_handlers
from eko.api.routers import (
    api_keys,
    auth,
    chat_message,
    chat_one_call,
    chat_profile,
    docs,
    events,
    guard,
    health,
    invitations,
    jobs,
    memory,
    message_edit,
    openai_compat,
    openai_embeddings,
    page,
    reflection,
    replies,
    room_attachments,
    room_export,
    room_members,
    rooms,
    search,
    users,
)
from eko.api.routers.room_attachments import ATTACHMENTS_PATH_SUFFIX, MULTIPART_OVERHEAD_BYTES
from eko.api.routers.rooms import IMPORT_PATH_SUFFIX
from eko.api.security_headers import SecurityHeadersMiddleware
from eko.config import Settings
from eko.store.migrate import upgrade
from eko.wiring import Services, build_services

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
        if owned and settings.jobs_worker_in_process:
            # One machine, one command: this process runs jobs too (EKO_JOBS_WORKER_IN_PROCESS).
            await app.state.services.jobs.start()
        recovery = app.state.services.recovery
        if owned and recovery is not None:
            # Stored messages still owed an answer (a crash, an outage) are answered.
            recovery.start()
        health_monitor = app.state.services.db_health
        await health_monitor.refresh()
        health_monitor.start()
        # Loads the local model and reads the instructions every reply starts with, at
        # background priority: the first person does not pay for them.
        warming = (
            asyncio.create_task(app.state.services.warm_up(), name="eko.warm-up")
            if owned and settings.local_warm_up
            else None
        )
        log.info("eko.started", version=__version__, database=app.state.services.database.dialect)
        # A server process (its own services): what start-up made is kept out of the
        # collector's passes (eko/api/heap.py). Tests passing services build many apps.
        frozen = startup_objects_frozen() if owned else contextlib.nullcontext(0)
        try:
            with frozen:
                yield
        finally:
            if warming is not None and not warming.done():
                warming.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await warming
            await health_monitor.aclose()
            if owned:
                await app.state.services.aclose()

    # /docs and /redoc are Eko's own (install_docs): offline assets, no inline script.
    app = FastAPI(
        title="Eko", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None
    )
    if services is not None:
        app.state.services = services
    install_problem_handlers(app)
    install_overload_handlers(app)
    app.include_router(health.router)
    app.include_router(users.router)
    app.include_router(rooms.router)
    app.include_router(search.router)
    app.include_router(room_export.router)
    app.include_router(replies.router)
    app.include_router(message_edit.router)
    app.include_router(openai_compat.router)
    app.include_router(openai_embeddings.router)
    app.include_router(guard.router)
    app.include_router(memory.router)
    app.include_router(chat_message.router)
    app.include_router(chat_profile.router)
    app.include_router(docs.router)
    app.include_router(chat_one_call.router)  # POST /v1/chat (eko/chain/)
    app.include_router(events.router)
    app.include_router(jobs.router)
    app.include_router(reflection.router)
    app.include_router(room_members.router)
    app.include_router(room_attachments.router)
    app.include_router(auth.router)
    app.include_router(invitations.router)
    app.include_router(api_keys.router)
    install_docs(app)  # before /static: it mounts /static/docs
    app.mount("/static", StaticFiles(directory=page.WEB_DIR), name="static")

    app.include_router(page.router)  # GET /: the web page

    app.add_middleware(NulInUrlMiddleware)
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=settings.max_body_bytes,
        larger=[
            (IMPORT_PATH_SUFFIX, settings.import_max_body_bytes, "EKO_IMPORT_MAX_BODY_BYTES"),
            (
                ATTACHMENTS_PATH_SUFFIX,
                settings.attachment_max_bytes + MULTIPART_OVERHEAD_BYTES,
                "EKO_ATTACHMENT_MAX_BYTES",
            ),
        ],
    )
    # Around the two above: their errors on the OpenAI routes come in OpenAI's shape.
    app.add_middleware(OpenAIErrorShapeMiddleware)
    # Outside the others, so that their own error responses get the headers too.
    app.add_middleware(SecurityHeadersMiddleware)
    app.add_middleware(RequestIdMiddleware)
    return app
