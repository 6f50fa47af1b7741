"""Overload answers: 503 with Retry-After, fast, instead of a request that hangs or a 500.

Three sources: the chat service's admission limits (messages in flight, people waiting for
the local model: nothing was stored), a database pool with
no free connection within `db_pool_timeout_s` (the transaction never started, so nothing of it
was stored either), and a database that cannot be reached or is restarting (a statement failed
and its transaction was rolled back: what the request did not finish is not stored; a retry
with the same Idempotency-Key or client_message_id completes it, never duplicates it).
"""

from __future__ import annotations

import structlog
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from eko.api.problems import problem_response
from eko.chat.service import Overloaded
from eko.store.outage import database_unavailable

log = structlog.get_logger("eko.api")

POOL_RETRY_AFTER_S = 2
DATABASE_RETRY_AFTER_S = 2


def install_overload_handlers(app: FastAPI) -> None:
    @app.exception_handler(Overloaded)
    async def _overloaded(request: Request, exc: Overloaded) -> JSONResponse:
        reason = "local_queue" if exc.detail else "inflight"
        log.warning("api.overloaded", path=request.url.path, reason=reason)
        detail = exc.detail or (
            f"Too many messages are being answered; nothing was stored. Retry in "
            f"{exc.retry_after_s} s."
        )
        return problem_response(
            503,
            "overloaded",
            "Server busy",
            f"{detail} (The same Idempotency-Key or client_message_id is safe.)",
            instance=request.url.path,
            headers={"Retry-After": str(exc.retry_after_s)},
        )

    @app.exception_handler(PoolTimeout)
    async def _pool_timeout(request: Request, exc: PoolTimeout) -> JSONResponse:
        log.warning("api.overloaded", path=request.url.path, reason="db_pool")
        return problem_response(
            503,
            "database-busy",
            "Database busy",
            "No database connection was free in time. Retry shortly.",
            instance=request.url.path,
            headers={"Retry-After": str(POOL_RETRY_AFTER_S)},
        )

    async def _database_unavailable(request: Request, exc: Exception) -> JSONResponse:
        if not database_unavailable(exc):
            raise exc  # a bug, not an outage: the generic 500 handler answers it
        # The type only: a statement's text and parameters can hold what users wrote.
        log.warning(
            "api.overloaded",
            path=request.url.path,
            reason="db_unavailable",
            error=type(exc).__name__,
        )
        return problem_response(
            503,
            "database-unavailable",
            "Database unavailable",
            "The database cannot be reached right now (restarting or unreachable); what this "
            "request did not finish was not stored. Retry shortly (the same Idempotency-Key "
            "or client_message_id is safe).",
            instance=request.url.path,
            headers={"Retry-After": str(DATABASE_RETRY_AFTER_S)},
        )

    app.add_exception_handler(DBAPIError, _database_unavailable)
    app.add_exception_handler(OSError, _database_unavailable)
