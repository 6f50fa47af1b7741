"""GET /: the web page (eko/web/index.html; its modules are served under /static).

A browser that is already signed in (its session cookie is valid) is told, in a `Link` preload
header, to fetch its room list at once: the request then runs alongside the page's modules
instead of after them, and the page's own `GET /v1/rooms` takes the preloaded answer. A
signed-out browser gets no such header (the preload would only be refused).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse

from eko.api.deps import SESSION_COOKIE, AccountsDep

WEB_DIR = Path(__file__).resolve().parent.parent.parent / "web"
ROOMS_PRELOAD = "</v1/rooms>; rel=preload; as=fetch; crossorigin=anonymous"

router = APIRouter(include_in_schema=False)


@router.get("/")
async def index(request: Request, accounts: AccountsDep) -> FileResponse:
    # Never reused from a cache: the header depends on the cookie.
    headers = {"Cache-Control": "no-cache", "Vary": "Cookie"}
    token = request.cookies.get(SESSION_COOKIE)
    if token and await accounts.session_user(token) is not None:
        headers["Link"] = ROOMS_PRELOAD
    return FileResponse(WEB_DIR / "index.html", headers=headers)
