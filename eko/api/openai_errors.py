"""OpenAI's error shape for every error on the OpenAI-compatible routes.

The routes answer their own errors as {"error": {message, type, param, code}}; what the app
answers before or around them (a body over the size limit: 413, a NUL in the URL or a header
FastAPI refuses: 422, the server or database too busy: 503, an unexpected error: 500, a wrong
method: 405) is problem+json. On these routes this middleware rewrites such an answer into
OpenAI's shape, keeping its status and headers (Retry-After), so that an OpenAI client reads
the error as it reads OpenAI's.
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from eko.api.problems import PROBLEM_MEDIA_TYPE

# The routes in OpenAI's shape (eko/api/routers/openai_compat.py, openai_embeddings.py).
OPENAI_PATHS = ("/v1/models", "/v1/chat/completions", "/v1/embeddings")


def is_openai_path(path: str) -> bool:
    return path in OPENAI_PATHS or path.startswith("/v1/models/")


def error_type(status: int) -> str:
    """OpenAI's `type` for a status."""
    if status == 401:
        return "authentication_error"
    if status == 403:
        return "permission_error"
    if status == 429:
        return "rate_limit_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


def openai_error(status: int, problem: dict[str, Any]) -> dict[str, Any]:
    """A problem+json body as OpenAI's error; `code` is the problem's kind, underscored
    (urn:eko:problem:payload-too-large -> payload_too_large; validation_error, overloaded)."""
    kind = re.split(r"[/:]", str(problem.get("type") or "").rstrip("/:"))[-1] or None
    message = problem.get("detail") or problem.get("title") or f"HTTP {status}"
    errors = problem.get("errors")
    param = None
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        loc = errors[0].get("loc")
        if isinstance(loc, list):
            param = ".".join(str(part) for part in loc) or None
    return {
        "error": {
            "message": str(message),
            "type": error_type(status),
            "param": param,
            "code": kind.replace("-", "_") if kind else None,
        }
    }


class OpenAIErrorShapeMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_openai_path(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        body = bytearray()

        async def reshaping_send(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and _is_problem(message):
                start = message
                return
            if start is None:
                await send(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body", False):
                return
            await _send_reshaped(send, start, bytes(body))

        await self.app(scope, receive, reshaping_send)


def _is_problem(start: Message) -> bool:
    for name, value in start.get("headers", []):
        if name.lower() == b"content-type":
            return bool(value.decode("latin-1").startswith(PROBLEM_MEDIA_TYPE))
    return False


async def _send_reshaped(send: Send, start: Message, body: bytes) -> None:
    status = int(start["status"])
    try:
        problem = json.loads(body)
    except ValueError:
        problem = {}
    payload = json.dumps(
        openai_error(status, problem if isinstance(problem, dict) else {})
    ).encode()
    headers = [
        (name, value)
        for name, value in start.get("headers", [])
        if name.lower() not in (b"content-type", b"content-length")
    ]
    headers += [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
    ]
    await send({**start, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
