"""Browser security headers on every response: a strict Content-Security-Policy, no MIME
sniffing, no framing, no referrer.

The page (eko/web) and Swagger UI (/docs, eko/api/docs_assets.py) load only Eko's own scripts
and stylesheets, so the policy allows nothing else. ReDoc (/redoc) alone needs more, on its own
page only: it injects <style> elements and runs its search index in a blob: worker (checked in
headless Chromium: under the strict policy it renders nothing).
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
REDOC_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
REDOC_PATHS = ("/redoc",)

COMMON_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
)
_REPLACED = {b"content-security-policy", *(name for name, _ in COMMON_HEADERS)}


def _with_headers(
    headers: Iterable[tuple[bytes, bytes]], policy: bytes
) -> list[tuple[bytes, bytes]]:
    kept = [(name, value) for name, value in headers if name.lower() not in _REPLACED]
    return [*kept, *COMMON_HEADERS, (b"content-security-policy", policy)]


class SecurityHeadersMiddleware:
    """Adds the security headers to every HTTP response (errors and static files included)."""

    def __init__(self, app: ASGIApp, *, redoc_paths: Iterable[str] = REDOC_PATHS) -> None:
        self.app = app
        self.redoc_paths = frozenset(redoc_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = REDOC_POLICY if scope.get("path") in self.redoc_paths else PAGE_POLICY
        encoded = policy.encode()

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = _with_headers(message.get("headers", []), encoded)
            await send(message)

        await self.app(scope, receive, send_with_headers)
