"""RFC 9457 problem+json errors with a stable `type` per kind of failure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

log = structlog.get_logger("eko.api")

PROBLEM_MEDIA_TYPE = "application/problem+json"
TYPE_PREFIX = "urn:eko:problem:"


class Problem(Exception):
    """Raise anywhere under a route: it becomes a problem+json response."""

    def __init__(
        self,
        status: int,
        kind: str,
        title: str,
        detail: str | None = None,
        *,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail or title)
        self.status = status
        self.kind = kind
        self.title = title
        self.detail = detail
        self.headers = headers
        self.extra = extra


def problem_response(
    status: int,
    kind: str,
    title: str,
    detail: str | None = None,
    *,
    instance: str | None = None,
    headers: Mapping[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    body: dict[str, Any] = {"type": TYPE_PREFIX + kind, "title": title, "status": status}
    if detail:
        body["detail"] = detail
    if instance:
        body["instance"] = instance
    body.update(extra)
    return JSONResponse(body, status_code=status, media_type=PROBLEM_MEDIA_TYPE, headers=headers)


_STATUS_KINDS = {
    400: ("bad-request", "Bad request"),
    401: ("unauthorized", "Unauthorized"),
    403: ("forbidden", "Forbidden"),
    404: ("not-found", "Not found"),
    405: ("method-not-allowed", "Method not allowed"),
    413: ("payload-too-large", "Payload too large"),
    415: ("unsupported-media-type", "Unsupported media type"),
    429: ("too-many-requests", "Too many requests"),
}


def install_problem_handlers(app: FastAPI) -> None:
    @app.exception_handler(Problem)
    async def _problem(request: Request, exc: Problem) -> JSONResponse:
        return problem_response(
            exc.status,
            exc.kind,
            exc.title,
            exc.detail,
            instance=request.url.path,
            headers=exc.headers,
            **exc.extra,
        )

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
            for e in exc.errors()
        ]
        return problem_response(
            422,
            "validation-error",
            "Request validation failed",
            "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors),
            instance=request.url.path,
            errors=errors,
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind, title = _STATUS_KINDS.get(exc.status_code, ("http-error", "HTTP error"))
        detail = exc.detail if isinstance(exc.detail, str) else None
        return problem_response(
            exc.status_code, kind, title, detail, instance=request.url.path, headers=exc.headers
        )

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("api.unhandled_error", path=request.url.path)
        return problem_response(
            500,
            "internal-error",
            "Internal server error",
            "The error was logged. Nothing partial was stored.",
            instance=request.url.path,
        )
