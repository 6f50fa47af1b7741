"""Overload answers: 503 with Retry-After, fast, instead of a request that hangs or a 500.

Two sources: the chat service's admission limit (nothing was stored) and a database pool with
no free connection within `db_pool_timeout_s` (the transaction never started, so nothing of it
was stored either).
"""

from __future__ import annotations

import structlog
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from sqlalchemy.exc import TimeoutError as PoolTimeout

from eko.api.problems import problem_response
from eko.chat.service import Overloaded

log = structlog.get_logger("eko.api")

POOL_RETRY_AFTER_S = 2


def install_overload_handlers(app: FastAPI) -> None:
    @app.exception_handler(Overloaded)
    async def _overloaded(request: Request, exc: Overloaded) -> JSONResponse:
        log.warning("api.overloaded", path=request.url.path, reason="inflight")
        return problem_response(
            503,
            "overloaded",
            "Server busy",
            f"Too many messages are being answered; nothing was stored. Retry in "
            f"{exc.retry_after_s} s (the same Idempotency-Key or client_message_id is safe).",
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
