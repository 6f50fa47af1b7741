"""Pure ASGI middleware: request ids bound to logs, a hard cap on request body size, and no
NUL character in URLs."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Sequence
from typing import Any

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from eko.api.problems import PROBLEM_MEDIA_TYPE, TYPE_PREFIX

log = structlog.get_logger("eko.api")

# An incoming X-Request-ID is echoed in a header and in every log line: only a plain token is.
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


class RequestIdMiddleware:
    """Binds a request id (from X-Request-ID or new) to every log line of the request, returns
    it as a header, and logs one `http.request` line per request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        incoming = headers.get(b"x-request-id", b"").decode("latin-1")
        request_id = incoming if _REQUEST_ID.fullmatch(incoming) else uuid.uuid4().hex
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id)
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [
                    *message.get("headers", []),
                    (b"x-request-id", request_id.encode()),
                ]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            log.info(
                "http.request",
                method=scope.get("method"),
                path=scope.get("path"),
                status=status,
                duration_ms=round((time.perf_counter() - started) * 1000, 1),
            )
            structlog.contextvars.clear_contextvars()


def _problem_start(status: int, payload: bytes) -> Message:
    return {
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
            (b"content-length", str(len(payload)).encode()),
        ],
    }


class NulInUrlMiddleware:
    """Rejects a NUL character anywhere in the path or query string with 422, before routing.

    PostgreSQL text cannot hold NUL, so a NUL in an id or a search query would fail in the
    database (a 500) instead of being refused; path and query parameters are checked here, once,
    and JSON bodies by their `InputText` fields.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (
            "\x00" in scope.get("path", "")
            or b"%00" in scope.get("query_string", b"")
            or b"\x00" in scope.get("query_string", b"")
        ):
            payload = json.dumps(
                {
                    "type": TYPE_PREFIX + "validation-error",
                    "title": "Request validation failed",
                    "status": 422,
                    "detail": "NUL characters are not accepted in the URL",
                    "instance": scope.get("path", ""),
                }
            ).encode()
            await send(_problem_start(422, payload))
            await send({"type": "http.response.body", "body": payload})
            return
        await self.app(scope, receive, send)


class _BodyTooLarge(Exception):
    pass


class BodyLimitMiddleware:
    """Rejects bodies over `max_bytes` with 413 before a handler reads them (chunked too).
    `larger`: (path suffix, bytes, the setting that sets them) for the routes that take more
    (a history import, an attachment)."""

    def __init__(
        self, app: ASGIApp, *, max_bytes: int, larger: Sequence[tuple[str, int, str]] = ()
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.larger = list(larger)

    def limit_of(self, path: str) -> tuple[int, str]:
        """The path's limit and the setting that sets it."""
        return next(
            ((limit, setting) for end, limit, setting in self.larger if path.endswith(end)),
            (self.max_bytes, "EKO_MAX_BODY_BYTES"),
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        max_bytes, setting = self.limit_of(str(scope.get("path", "")))
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > max_bytes:
            await self._reject(scope, send, max_bytes, setting)
            return
        received = 0
        response_started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > max_bytes:
                    raise _BodyTooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal response_started
            if message["type"] == "http.response.start":
                response_started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _BodyTooLarge:
            if not response_started:
                await self._reject(scope, send, max_bytes, setting)

    async def _reject(self, scope: Scope, send: Send, max_bytes: int, setting: str) -> None:
        body: dict[str, Any] = {
            "type": TYPE_PREFIX + "payload-too-large",
            "title": "Payload too large",
            "status": 413,
            "detail": f"request body exceeds {max_bytes} bytes ({setting})",
            "instance": scope.get("path", ""),
        }
        payload = json.dumps(body).encode()
        await send(_problem_start(413, payload))
        await send({"type": "http.response.body", "body": payload})
