"""Follow a reply being written, for any streaming response shape (native SSE, OpenAI chunks).

`start_live` starts an exchange writing into a new LiveReply and returns once the user message
is stored (errors before that raise, nothing streamed). `follow` then yields the deltas (those
so far first, when it joins a reply in progress) — and, when asked, the reply's place in the
local model's line while it waits — then the stored exchange (or the exception that ended it).
A follower that goes away before the end stops the generation, if it is the one that started
it: closing the stream is a stop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import structlog

from eko.chat.service import Exchange
from eko.chat.streaming import LiveReply
from eko.events.types import Event
from eko.llm.waiting import QueuePlace

log = structlog.get_logger("eko.api")

Publish = Callable[[Event], Coroutine[Any, Any, None]]
Start = Callable[[LiveReply], Coroutine[Any, Any, Exchange]]


@dataclass(frozen=True, slots=True)
class Ended:
    """The last item of `follow`: the stored exchange, or why there is none."""

    exchange: Exchange | None
    error: BaseException | None = None


def delta_event(room_id: str, user_message_id: str | None, index: int, text: str) -> Event:
    return Event(
        type="message.delta",
        room_id=room_id,
        data={"reply_to_id": user_message_id, "index": index, "text": text},
    )


async def start_live(
    start: Start, *, publish: Publish | None, room_id: str
) -> tuple[LiveReply, asyncio.Task[Exchange]]:
    pending: set[asyncio.Task[None]] = set()

    def on_delta(index: int, text: str) -> None:
        # A second tab (the events stream) sees the reply being written too.
        if publish is None:
            return
        task = asyncio.create_task(publish(delta_event(room_id, live.user_message_id, index, text)))
        pending.add(task)
        task.add_done_callback(pending.discard)

    live = LiveReply(on_delta=on_delta)
    post = asyncio.create_task(start(live), name="live.reply")
    stored = asyncio.create_task(live.stored.wait())
    await asyncio.wait({post, stored}, return_when=asyncio.FIRST_COMPLETED)
    if not stored.done():
        stored.cancel()
        post.result()  # raises the reason nothing was stored
    # From here on the exchange runs to its end whatever the client does (chat.post shields it).
    post.add_done_callback(_consume)
    return live, post


async def follow(live: LiveReply, post: asyncio.Task[Exchange]) -> AsyncIterator[str | Ended]:
    """The deltas, then the end (no places in the line)."""
    async with contextlib.aclosing(follow_places(live, post)) as items:
        async for item in items:
            if not isinstance(item, QueuePlace):
                yield item


async def follow_places(
    live: LiveReply, post: asyncio.Task[Exchange]
) -> AsyncGenerator[str | QueuePlace | Ended, None]:
    """The deltas and the reply's places in the local model's line, then the end."""
    target = live.target
    queue = target.listen()
    finished = False
    waiting: asyncio.Task[str | QueuePlace] | None = None
    try:
        while True:
            waiting = asyncio.ensure_future(queue.get())
            await asyncio.wait({waiting, post}, return_when=asyncio.FIRST_COMPLETED)
            if not waiting.done():
                break
            item, waiting = waiting.result(), None
            yield item
        while not queue.empty():
            yield queue.get_nowait()
        try:
            ended = Ended(post.result())
        except Exception as exc:
            log.exception("chat.stream.failed")
            ended = Ended(None, exc)
        finished = True
        yield ended
    finally:
        if waiting is not None:
            waiting.cancel()
        target.unlisten(queue)
        if not finished and target is live and live.stop():
            log.info("chat.stream.client_gone", message_id=live.user_message_id)


def remainder(content: str, shown: str) -> str:
    """What the stored reply adds to the text shown (a cache answer: all of it)."""
    if content.startswith(shown) and len(content) > len(shown):
        return content[len(shown) :]
    return ""


def _consume(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        with contextlib.suppress(Exception):
            task.exception()
