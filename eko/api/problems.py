"""RFC 9457 problem+json errors with a stable `type` per kind of failure."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException

log = structlog.get_logger("eko.api")

PROBLEM_MEDIA_TYPE = "application/problem+json"
TYPE_PREFIX = "urn:eko:problem:"


class FieldError(BaseModel):
    loc: list[str | int]
    msg: str
    type: str


class ProblemDetails(BaseModel):
    """The body of every error response (RFC 9457). Some kinds add members (`errors` for
    validation errors; `limit`, `length`, `reason`)."""

    model_config = ConfigDict(extra="allow")
    type: str
    title: str
    status: int
    detail: str | None = None
    instance: str | None = None
    errors: list[FieldError] | None = None


_PROBLEM_SCHEMA_REF = {"$ref": "#/components/schemas/ProblemDetails"}
_DESCRIPTIONS = {
    400: "Malformed request body",
    401: "Missing or invalid API key",
    403: "Not allowed for this user",
    404: "Not found, or not visible to this user",
    409: "Conflict with the current state",
    413: "Request body or message too large",
    415: "Unsupported media type",
    422: "Invalid input; nothing was stored",
    429: "Too many requests; retry after Retry-After seconds",
    503: "Busy, or a dependency is unavailable; retry (after Retry-After seconds when given)",
}
_HEADERS: dict[int, dict[str, Any]] = {
    401: {"WWW-Authenticate": {"description": "Bearer", "schema": {"type": "string"}}},
    503: {
        "Retry-After": {
            "description": "Seconds to wait before retrying",
            "schema": {"type": "integer", "minimum": 0},
        }
    },
}
_HEADERS[429] = _HEADERS[503]
# Documented on every operation: any body can be malformed, too large or invalid, and any
# request can meet an overloaded server.
DEFAULT_PROBLEM_STATUSES = (400, 413, 422, 503)


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The `responses=` of a route for the problems it may answer with, as problem+json.

    401, 400, 413, 422 and 503 are documented on every operation already (see
    `document_problems`): list the route's own (403, 404, 409, ...)."""
    documented: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        response: dict[str, Any] = {
            "description": _DESCRIPTIONS.get(status, "Error"),
            "content": {PROBLEM_MEDIA_TYPE: {"schema": _PROBLEM_SCHEMA_REF}},
        }
        if status in _HEADERS:
            response["headers"] = _HEADERS[status]
        documented[status] = response
    return documented


def _add_problem_responses(openapi: dict[str, Any]) -> None:
    """Every operation documents its problem+json errors: the defaults, 401 where it declares
    bearer auth, and a problem+json 422 instead of FastAPI's own (a shape Eko never sends)."""
    defaults = problem_responses(*DEFAULT_PROBLEM_STATUSES)
    unauthorized = problem_responses(401)[401]
    for path_item in openapi.get("paths", {}).values():
        for operation in path_item.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            responses: dict[str, Any] = operation["responses"]
            for status, response in defaults.items():
                current = responses.get(str(status))
                if current is None or PROBLEM_MEDIA_TYPE not in current.get("content", {}):
                    responses[str(status)] = response
            if operation.get("security"):
                responses.setdefault("401", unauthorized)
    schemas = openapi.setdefault("components", {}).setdefault("schemas", {})
    problem = ProblemDetails.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(problem.pop("$defs", {}))
    schemas["ProblemDetails"] = problem
    # FastAPI's validation error models, now unreferenced (the second is used by the first).
    for name in ("HTTPValidationError", "ValidationError"):
        others = {key: value for key, value in schemas.items() if key != name}
        if f"#/components/schemas/{name}" not in json.dumps([openapi["paths"], others]):
            schemas.pop(name, None)


def document_problems(app: FastAPI) -> None:
    """Make the app's OpenAPI document every problem+json response (see above)."""
    generate = app.openapi

    def openapi_with_problems() -> dict[str, Any]:
        fresh = app.openapi_schema is None
        openapi = generate()
        if fresh:
            _add_problem_responses(openapi)
        return openapi

    app.openapi = openapi_with_problems  # type: ignore[method-assign]


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _encodable(value: Any) -> Any:
    """Problems may quote client input (a field name in `errors[].loc`); a lone surrogate in it
    would make the error response itself unencodable."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_encodable(item) for item in value]
    if isinstance(value, dict):
        return {_encodable(key): _encodable(item) for key, item in value.items()}
    return value


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
    return JSONResponse(
        _encodable(body), status_code=status, media_type=PROBLEM_MEDIA_TYPE, headers=headers
    )


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
    document_problems(app)

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
