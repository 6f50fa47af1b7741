"""A reply as Server-Sent Events: POST /v1/rooms/{id}/messages with `Accept: text/event-stream`
(or `?stream=true`).

    event: message  data: the stored user message (MessageOut)
    event: queued   data: {"position": n, "estimate_s": t}             (0..n times)
    event: delta    data: {"index": n, "text": "..."}                 (0..n times)
    event: error    data: {"code": ..., "detail": ...}                  (a broken or failed reply)
    event: done     data: {"message": MessageOut | null, "source": model|cache|paywall|fallback,
                           "pending": true when the answer is owed and will come later}

`queued` says where the reply waits in the local model's line (eko/llm/waiting.py): `position`
model calls go before it (the one running included), its turn in about `estimate_s` seconds; it
comes when the wait starts and whenever the place changes, and `position` 0 says the turn came
(the model is reading the prompt). The deltas are the text as it is written; `done` carries the
reply as stored, which is what a client keeps (a cache or paywall answer arrives as one delta).
Problems found before the user message is stored (too long, empty, key reused, overloaded) are
ordinary problem+json responses, not streams. A reconnect with the same idempotency key replays
the reply in progress and follows it, or gets the stored one. Closing the stream stops the
generation.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import Request
from fastapi.responses import StreamingResponse

from eko.api.live_follow import Publish, Start, follow_places, remainder, start_live
from eko.api.schemas.rooms import MessageOut
from eko.chat.service import Exchange
from eko.chat.streaming import LiveReply
from eko.llm.waiting import QueuePlace
from eko.store.models import Message, User

SSE_MEDIA_TYPE = "text/event-stream"


# One Server-Sent Event: its name and its JSON text.
SSE_EVENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"event": {"type": "string"}, "data": {"type": "string"}},
    "required": ["data"],
}


def sse_doc(status: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI: the second shape of a route's success response (Server-Sent Events)."""
    return {
        status: {
            "description": "As JSON, or as Server-Sent Events when asked for "
            "(`Accept: text/event-stream` or `?stream=true`): events message, queued, "
            "delta, error, done.",
            "content": {SSE_MEDIA_TYPE: {"schema": SSE_EVENT_SCHEMA}},
        }
    }


def wants_stream(request: Request, stream: bool) -> bool:
    return stream or SSE_MEDIA_TYPE in request.headers.get("accept", "")


def sse(event: str, data: Any) -> bytes:
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    return f"event: {event}\ndata: {body}\n\n".encode()


def source_of(message: Message) -> str:
    """Where a stored reply came from, for clients: model, cache, paywall or fallback."""
    if message.type == "cached_response":
        return "cache"
    if message.type in ("paywall", "fallback"):
        return message.type
    return "model"


async def stream_reply(
    *, start: Start, publish: Publish | None, user: User, room_id: str, status_code: int = 201
) -> StreamingResponse:
    """Start the exchange (`start(live)`: chat.post or a regeneration, writing into `live`);
    returns once the user message is stored. Errors before that raise, for the caller to turn
    into problems."""
    live, post = await start_live(start, publish=publish, room_id=room_id)
    return StreamingResponse(
        _events(live, post, user),
        media_type=SSE_MEDIA_TYPE,
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        status_code=status_code,
    )


async def _events(
    live: LiveReply, post: asyncio.Task[Exchange], user: User
) -> AsyncIterator[bytes]:
    assert live.user_message is not None
    yield sse(
        "message",
        MessageOut.of(live.user_message, sender_public_id=user.public_id).model_dump(mode="json"),
    )
    shown: list[str] = []
    async for item in follow_places(live, post):
        if isinstance(item, QueuePlace):
            yield sse("queued", {"position": item.position, "estimate_s": item.estimate_s})
            continue
        if isinstance(item, str):
            shown.append(item)
            yield sse("delta", {"index": len(shown) - 1, "text": item})
            continue
        if item.exchange is None:
            error = type(item.error).__name__
            yield sse("error", {"code": "answer_failed", "detail": error})
            return
        reply = item.exchange.assistant_message
        if reply is not None:
            rest = remainder(reply.content, "".join(shown))
            if rest:
                yield sse("delta", {"index": len(shown), "text": rest})
            if (reply.meta or {}).get("incomplete"):
                yield sse(
                    "error",
                    {
                        "code": "stream_interrupted",
                        "detail": "the model stopped answering mid-way; the partial reply "
                        "is stored, marked incomplete",
                    },
                )
        yield sse(
            "done",
            {
                "message": MessageOut.of(reply).model_dump(mode="json") if reply else None,
                "source": source_of(reply) if reply is not None else None,
                # Stored, answer owed: it comes later as a message.created event.
                "pending": item.exchange.answer_pending,
            },
        )
