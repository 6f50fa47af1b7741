"""/v1/events: live events as a WebSocket, or as Server-Sent Events over plain HTTP
(`Accept: text/event-stream`) on the same path. Authenticated by API key (`Authorization:
Bearer`), or by a short-lived `?token=` from POST /v1/events/token for browsers, which cannot
set headers on a WebSocket or an EventSource. Each connection receives only what its user may
see; a connection that falls behind is dropped with a notice (see eko/events/fanout.py). A
connection opened with a token ends (with a `stream.expired` notice) when the token expires.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

import structlog
from fastapi import APIRouter, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from eko.api.deps import CurrentUser, ServicesDep
from eko.api.problems import Problem
from eko.events import tokens
from eko.events.access import EventAccess
from eko.events.stream import EXPIRED_NOTICE, EventStream
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.models import User
from eko.wiring import Services

log = structlog.get_logger("eko.api")
router = APIRouter(tags=["events"])

# A WebSocket client that cannot take a message within this long is dropped.
SEND_TIMEOUT_S = 10.0
# WebSocket close codes (4000-4999 are the application's): unauthenticated, fell behind.
CLOSE_UNAUTHORIZED = 4401
CLOSE_TOO_SLOW = 4408


class EventToken(BaseModel):
    token: str
    expires_at: int  # Unix seconds
    # How to use it: GET/WebSocket /v1/events?token=...
    url: str


@router.post("/v1/events/token", status_code=201)
async def create_event_token(user: CurrentUser, services: ServicesDep) -> EventToken:
    """A short-lived token for `/v1/events?token=…` (browsers: EventSource, WebSocket)."""
    token, expires = tokens.issue(user, ttl_s=services.settings.events_token_ttl_s)
    return EventToken(token=token, expires_at=expires, url=f"/v1/events?token={token}")


@dataclass(frozen=True, slots=True)
class Caller:
    """Who opened a connection, and until when it may stay open (a token's expiry, Unix
    seconds; None with an API key)."""

    user: User
    expires_at: int | None = None

    def expired(self, now: float | None = None) -> bool:
        if self.expires_at is None:
            return False
        return (now if now is not None else time.time()) >= self.expires_at

    def wait_s(self, keepalive_s: float, now: float | None = None) -> float:
        """How long to wait for the next event: the keep-alive interval, or less when the
        token expires sooner."""
        if self.expires_at is None:
            return keepalive_s
        left = self.expires_at - (now if now is not None else time.time())
        return max(0.0, min(keepalive_s, left))


async def authenticate(
    database: Database, authorization: str | None, token: str | None
) -> Caller | None:
    async with database.session() as session:
        if authorization:
            scheme, _, key = authorization.partition(" ")
            if scheme.lower() == "bearer" and key.strip():
                user = await user_repo.get_by_api_key(session, api_key=key.strip())
                return Caller(user) if user is not None else None
            return None
        if token:
            user = await tokens.verify(session, token)
            return Caller(user, tokens.expires_at(token)) if user is not None else None
    return None


async def _open_stream(services: Services, user: User) -> EventStream:
    subscription = await services.events.subscribe(max_queue=services.settings.events_queue_size)
    return EventStream(subscription, EventAccess(services.database, user))


@router.get("/v1/events", include_in_schema=False)
async def events_over_sse(
    request: Request,
    services: ServicesDep,
    token: Annotated[str | None, Query()] = None,
) -> StreamingResponse:
    """Server-Sent Events (the same stream as the WebSocket)."""
    if "text/event-stream" not in request.headers.get("accept", ""):
        raise Problem(
            406,
            "not-acceptable",
            "Not acceptable",
            "/v1/events streams Server-Sent Events (send `Accept: text/event-stream`) or "
            "upgrades to a WebSocket.",
        )
    caller = await authenticate(services.database, request.headers.get("authorization"), token)
    if caller is None:
        raise Problem(
            401,
            "invalid-api-key",
            "Invalid or missing credentials",
            "Send `Authorization: Bearer <key>`, or `?token=` from POST /v1/events/token.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    stream = await _open_stream(services, caller.user)
    keepalive = services.settings.events_keepalive_s

    async def body() -> AsyncIterator[str]:
        try:
            yield "retry: 3000\n: connected\n\n"
            while True:
                if caller.expired():
                    yield sse_frame(dict(EXPIRED_NOTICE))
                    return
                item = await stream.next(caller.wait_s(keepalive))
                if item is None:
                    if stream.closed:
                        return
                    if not caller.expired():
                        yield ": keep-alive\n\n"
                    continue
                yield sse_frame(item)
                if item["type"] == "stream.dropped":
                    return
        finally:
            stream.close()

    return StreamingResponse(
        body(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def sse_frame(item: dict[str, Any]) -> str:
    data = json.dumps(item, ensure_ascii=False, separators=(",", ":"), default=str)
    event_id = item.get("id")
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: {item['type']}\ndata: {data}\n\n"


@router.websocket("/v1/events")
async def events_over_websocket(
    websocket: WebSocket, token: Annotated[str | None, Query()] = None
) -> None:
    services: Services = websocket.app.state.services
    caller = await authenticate(services.database, websocket.headers.get("authorization"), token)
    if caller is None:
        await websocket.close(code=CLOSE_UNAUTHORIZED, reason="invalid or missing credentials")
        return
    user = caller.user
    await websocket.accept()
    stream = await _open_stream(services, user)
    # The client sends nothing we need, but reading is how a close is noticed.
    gone = asyncio.create_task(_until_disconnect(websocket))
    keepalive = services.settings.events_keepalive_s
    try:
        await websocket.send_json({"type": "stream.connected", "data": {"user": user.public_id}})
        while not gone.done():
            if caller.expired():
                with contextlib.suppress(TimeoutError):
                    notice = websocket.send_json(dict(EXPIRED_NOTICE))
                    await asyncio.wait_for(notice, SEND_TIMEOUT_S)
                await websocket.close(code=CLOSE_UNAUTHORIZED, reason="token expired")
                break
            next_item = asyncio.create_task(stream.next(caller.wait_s(keepalive)))
            done, _ = await asyncio.wait({next_item, gone}, return_when=asyncio.FIRST_COMPLETED)
            if next_item not in done:
                next_item.cancel()
                break
            item = next_item.result()
            if item is None and caller.expired():
                continue  # the notice, not a keep-alive
            payload = item if item is not None else {"type": "stream.keepalive"}
            try:
                await asyncio.wait_for(websocket.send_json(payload), SEND_TIMEOUT_S)
            except TimeoutError:
                log.warning("events.client_too_slow", user=user.public_id)
                break
            if item is not None and item["type"] == "stream.dropped":
                await websocket.close(code=CLOSE_TOO_SLOW, reason="fell behind")
                break
    except (WebSocketDisconnect, RuntimeError):
        pass  # the client went away
    finally:
        stream.close()
        gone.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await gone


async def _until_disconnect(websocket: WebSocket) -> None:
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
