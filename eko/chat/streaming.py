"""Replies written live: the deltas of one reply for every listener, stop, and the writer's call.

A `LiveReply` is opened by a streaming request (POST …/messages with SSE) and handed to the chat
service, which registers it under the user message once that is stored (`LiveReplies`): a
reconnect with the same idempotency key then follows the reply in progress (deltas so far,
then the rest) instead of asking the model again. The response writer finds it through a
context variable (it runs deep inside the plan executor, in the answer's task) and streams its
model call into it; nothing else streams (the orchestrator's call stays whole).

Stopping (POST …/stop, or the streaming client going away) cancels the model call only: the
answer goes on to be stored with what was produced, marked stopped. A stream that breaks
after it began is stored the same way, marked incomplete. Either is also marked truncated, so
the memory guard never learns a cut reply.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

import structlog

from eko.chat.pipeline import Draft
from eko.events.fanout import SubscriptionDropped
from eko.events.types import Event, EventBus
from eko.llm.types import Attempt, Completion, Usage
from eko.llm.waiting import QueuePlace
from eko.store.models import Message

log = structlog.get_logger("eko.chat")

_live: ContextVar[LiveReply | None] = ContextVar("eko_live_reply", default=None)
# A stop asked in one API process, for the process writing the reply.
STOP_EVENT = "reply.stop"


DeltaListener = Callable[[int, str], None]


class LiveReply:
    """One reply being written: its display text so far, its listeners, its stop switch, and
    its place in the local model's line while it waits (eko.llm.waiting: a WaitListener)."""

    def __init__(self, *, on_delta: DeltaListener | None = None) -> None:
        self.parts: list[str] = []
        self.user_message: Message | None = None
        # The reply this request follows: itself, or one already in progress for the message.
        self.target: LiveReply = self
        self.stored = asyncio.Event()
        self.stopped = False
        # The model call ended on its own: a stop after that changes nothing.
        self.generated = False
        self.interrupted: str | None = None
        self.provider: tuple[str, str] | None = None
        self._on_delta = on_delta
        self._listeners: list[asyncio.Queue[str | QueuePlace]] = []
        # The latest place in the local model's line (position 0: its turn came).
        self.place: QueuePlace | None = None
        # The writer's model call while it runs (cancelled by stop()).
        self.generation: asyncio.Task[Any] | None = None
        self._started = time.perf_counter()

    @property
    def text(self) -> str:
        return "".join(self.parts)

    @property
    def user_message_id(self) -> str | None:
        return self.user_message.id if self.user_message is not None else None

    def user_stored(self, message: Message, target: LiveReply) -> None:
        self.user_message = message
        self.target = target
        self.stored.set()

    def delta(self, text: str) -> None:
        if not text:
            return
        self.parts.append(text)
        for queue in self._listeners:
            queue.put_nowait(text)
        if self._on_delta is not None:
            try:
                self._on_delta(len(self.parts) - 1, text)
            except Exception:  # a listener's bug must not stop the reply
                log.warning("chat.stream.listener_failed", exc_info=True)

    def queued(self, place: QueuePlace) -> None:
        """Where the reply's model call stands in the local model's line (heard while it
        waits, and once when its turn comes)."""
        self.place = place
        for queue in self._listeners:
            queue.put_nowait(place)

    def listen(self) -> asyncio.Queue[str | QueuePlace]:
        """A queue holding every delta so far (or, before the first, the reply's place in the
        line), then each new delta or place as it comes."""
        queue: asyncio.Queue[str | QueuePlace] = asyncio.Queue()
        if not self.parts and self.place is not None:
            queue.put_nowait(self.place)
        for part in self.parts:
            queue.put_nowait(part)
        self._listeners.append(queue)
        return queue

    def unlisten(self, queue: asyncio.Queue[str | QueuePlace]) -> None:
        if queue in self._listeners:
            self._listeners.remove(queue)

    def stop(self) -> bool:
        """Stop the generation (now, or before it starts). False when it is too late (the
        reply was written, or stopped already)."""
        if self.stopped or self.generated:
            return False
        self.stopped = True
        if self.generation is not None and not self.generation.done():
            self.generation.cancel()
        return True

    def annotate(self, draft: Draft) -> None:
        """A stopped or broken reply is stored as what was produced, marked so."""
        if not self.stopped and self.interrupted is None:
            return
        if draft.meta.answered_by:
            return  # a short-circuit (cache, paywall) answered: nothing was generated
        draft.content = self.text.strip()
        draft.type = "message"
        draft.meta.clear("fallback", "fallback_cause")
        draft.meta.truncated = True  # never learned by the memory guard
        if self.stopped:
            draft.meta.stopped = True
        if self.interrupted is not None:
            draft.meta.set(incomplete=True, stream_error=self.interrupted[:300])

    def partial_completion(self, attempts: Sequence[Attempt] = ()) -> Completion[Any]:
        """What was produced before a stop or a break, as the writer's completion."""
        provider, model = self.provider or ("none", "none")
        duration_ms = (time.perf_counter() - self._started) * 1000.0
        if not attempts:  # stopped: the runtime recorded the attempt, the caller never saw it
            attempts = (
                Attempt(provider, model, "error", duration_ms, error="stopped by the caller"),
            )
        return Completion(
            text=self.text,
            data=None,
            provider=provider,
            model=model,
            usage=Usage(),
            duration_ms=duration_ms,
            attempts=tuple(attempts),
            truncated=True,
        )

    def began(self, provider: str, model: str) -> None:
        self.provider = (provider, model)


class LiveReplies:
    """The replies being written in this process, by user message id.

    With a shared event bus (PostgreSQL, several API processes), a stop asked in another
    process arrives as a `reply.stop` event: this process listens while it writes replies.
    """

    def __init__(self, events: EventBus | None = None) -> None:
        self._by_message: dict[str, LiveReply] = {}
        self._events = events
        self._listener: asyncio.Task[None] | None = None

    @property
    def shared(self) -> bool:
        """True when other processes may be writing replies (a stop must be relayed)."""
        return self._events is not None and self._events.backend != "local"

    def get(self, user_message_id: str) -> LiveReply | None:
        return self._by_message.get(user_message_id)

    def adopt(self, user_message: Message, live: LiveReply) -> LiveReply:
        """Register `live` for the message, or return the one already writing its reply."""
        current = self._by_message.setdefault(user_message.id, live)
        live.user_stored(user_message, current)
        if self.shared and self._listener is None:
            self._listener = asyncio.create_task(self._listen(), name="live.stop_relay")
        return current

    def discard(self, user_message_id: str, live: LiveReply) -> None:
        if self._by_message.get(user_message_id) is live:
            del self._by_message[user_message_id]
        if not self._by_message and self._listener is not None:
            self._listener.cancel()  # nothing written here any more: nothing to stop
            self._listener = None

    async def relay_stop(self, room_id: str, user_message_id: str) -> None:
        """Ask every process to stop this message's reply (the one writing it will)."""
        if self._events is not None:
            await self._events.publish(
                Event(type=STOP_EVENT, room_id=room_id, data={"reply_to_id": user_message_id})
            )

    async def _listen(self) -> None:
        assert self._events is not None
        while True:
            subscription = await self._events.subscribe(max_queue=10_000)
            try:
                while True:
                    event = await subscription.get()
                    if event.type != STOP_EVENT:
                        continue
                    live = self._by_message.get(str(event.data.get("reply_to_id")))
                    if live is not None and live.stop():
                        log.info("chat.stream.stopped_by_relay", message_id=live.user_message_id)
            except SubscriptionDropped:
                log.warning("chat.stream.stop_relay_dropped")  # resubscribe
            finally:
                subscription.close()


def current_live() -> LiveReply | None:
    return _live.get()


def with_live(live: LiveReply | None) -> Any:
    """Set the live reply for tasks created until the returned token is reset."""
    return _live.set(live)


def reset_live(token: Any) -> None:
    _live.reset(token)
