"""Entry of the message pipeline: admit, store the user message (and, in the same transaction,
that it is owed an answer), then answer it through eko/chat/answering.py."""

from __future__ import annotations

import asyncio
import hashlib
import os
import socket
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from eko.chat.admission import LocalLine, Overloaded
from eko.chat.answering import Answerer, reply_dedupe_key
from eko.chat.pipeline import ReadsAhead, ShortCircuit, Turn, Writer
from eko.chat.storing import CountedAndOwed
from eko.chat.streaming import LiveReplies, LiveReply, current_live, reset_live, with_live
from eko.config import Settings
from eko.events.payloads import message_created
from eko.events.types import EventBus
from eko.jobs.after_reply import AfterReplyJobs
from eko.jobs.queue import JobQueue
from eko.lobby.mentions import is_mentioned, persona_name
from eko.memory.recent import RecentReader
from eko.store import messages as message_repo
from eko.store.db import Database
from eko.store.models import Message, Room, User
from eko.store.outage import database_busy_or_unavailable

log = structlog.get_logger("eko.chat")


class MessageTooLong(ValueError):
    def __init__(self, length: int, limit: int) -> None:
        super().__init__(f"message is {length} characters; the limit is {limit}")
        self.length = length
        self.limit = limit


class EmptyMessage(ValueError):
    pass


class IdempotencyConflict(ValueError):
    """The same idempotency key was sent before with a different message."""


@dataclass(frozen=True, slots=True)
class Exchange:
    user_message: Message
    assistant_message: Message | None
    # False when the same client message id was posted before (nothing new stored).
    created: bool
    # The message is stored and owed an answer, but answering it failed for now (the database
    # was busy or unreachable): the recovery loop answers it (eko/chat/recovery.py).
    answer_pending: bool = False


class ChatService:
    def __init__(
        self,
        *,
        database: Database,
        writer: Writer,
        settings: Settings,
        short_circuits: Sequence[ShortCircuit] = (),
        readers: Sequence[ReadsAhead] = (),
        after_reply: AfterReplyJobs | None = None,
        jobs: JobQueue | None = None,
        events: EventBus | None = None,
        recent: RecentReader | None = None,
        worker_id: str | None = None,
        local_line: LocalLine | None = None,
    ) -> None:
        self._database = database
        # People waiting for the local model: refused past EKO_LOCAL_MAX_QUEUE (admission.py).
        self._local_line = local_line
        self._settings = settings
        self._max_inflight = settings.chat_max_inflight
        # message.created for every stored message (live clients of /v1/events).
        self._events = events
        # This process in the answer outbox (eko/store/answer_outbox.py).
        self.worker_id = worker_id or new_worker_id()
        self._lease_s = settings.chat_answer_lease_s
        self.answerer = Answerer(
            database=database,
            writer=writer,
            settings=settings,
            worker_id=self.worker_id,
            short_circuits=short_circuits,
            readers=readers,
            after_reply=after_reply,
            jobs=jobs,
            events=events,
            recent=recent,
        )
        # Messages being stored and answered, by dedupe key (duplicates of one message count
        # once): the admission limit, and the work shutdown waits for.
        self._inflight: dict[str, int] = {}
        # Of those, the ones being answered now (the local model's line, with the one served).
        self._answering: set[str] = set()
        self._work: set[asyncio.Task[Any]] = set()
        # Replies being streamed, by user message (eko/chat/streaming.py).
        self.live = LiveReplies(events)

    @property
    def writer(self) -> Writer:
        return self.answerer.writer

    @writer.setter
    def writer(self, writer: Writer) -> None:
        self.answerer.writer = writer

    @property
    def short_circuits(self) -> list[ShortCircuit]:
        return self.answerer.short_circuits

    @property
    def answering_ids(self) -> list[str]:
        """The user messages this process is answering now (the leases it renews)."""
        return self.answerer.answering_ids

    def validate(self, content: str) -> str:
        text = content.strip()
        if not text:
            raise EmptyMessage("message content is empty")
        if len(text) > self._settings.max_message_chars:
            raise MessageTooLong(len(text), self._settings.max_message_chars)
        return text

    async def post(
        self,
        *,
        user: User,
        room: Room,
        content: str,
        client_message_id: str | None = None,
        respond: bool = True,
        live: LiveReply | None = None,
        route: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Exchange:
        """Validate, store the user message (counted against the quota), then answer it
        (unless respond=False: the client asks for the answer later, POST /v1/chat/message).

        `client_message_id` is the idempotency key: the same key again returns what the first
        post stored (and its answer), and with a different content raises IdempotencyConflict.
        Once the message is accepted, storing and answering it run to the end even if the
        caller goes away (the HTTP client disconnects): an acknowledged message is answered.
        Raises Overloaded, with nothing stored, past `chat_max_inflight` messages in flight or
        past `local_max_queue` people waiting for the local model (eko/chat/admission.py).
        With `live`, the reply is streamed into it (see eko/chat/streaming.py). `route`: the
        caller's category for the message (code, archi, …), kept with it for the classifier
        of the reflexive chain (eko/chain/classify.py). `meta`: kept with the user message
        (e.g. the OpenAI `user` field, the end user of the caller's application).
        """
        text = self.validate(content)
        token = client_message_id or uuid.uuid4().hex
        dedupe_key = f"user:{room.id}:{user.id}:{token}"
        # Without the client's idempotency key the key is a new random one: nothing to look up.
        new_key = client_message_id is None
        if dedupe_key not in self._inflight:
            if len(self._inflight) >= self._max_inflight:
                raise Overloaded(retry_after_s=2)
            if self._local_line is not None and respond and self.should_answer(room, text):
                self._local_line.admit(len(self._answering))
                self._answering.add(dedupe_key)
        self._inflight[dedupe_key] = self._inflight.get(dedupe_key, 0) + 1
        token = with_live(live)  # the task's context carries it to the writer
        try:
            task = asyncio.create_task(
                self._post(
                    user=user,
                    room=room,
                    text=text,
                    dedupe_key=dedupe_key,
                    new_key=new_key,
                    respond=respond,
                    route=route,
                    meta=meta,
                ),
                name=f"post:{dedupe_key}",
            )
        finally:
            reset_live(token)
        self._track(task)
        task.add_done_callback(lambda _t: self._leave(dedupe_key))
        # shield: a cancelled request (client gone) leaves the task running to the end.
        return await asyncio.shield(task)

    def _leave(self, dedupe_key: str) -> None:
        count = self._inflight.get(dedupe_key, 0)
        if count <= 1:
            self._inflight.pop(dedupe_key, None)
            self._answering.discard(dedupe_key)
        else:
            self._inflight[dedupe_key] = count - 1

    @property
    def max_inflight(self) -> int:
        return self._max_inflight

    @property
    def inflight(self) -> int:
        """Distinct messages being stored or answered right now."""
        return len(self._inflight)

    async def drain(self) -> None:
        """Wait for every accepted message to be stored and answered (shutdown)."""
        while self._work:
            await asyncio.gather(*list(self._work), return_exceptions=True)

    async def _post(
        self,
        *,
        user: User,
        room: Room,
        text: str,
        dedupe_key: str,
        respond: bool,
        route: str | None = None,
        meta: dict[str, Any] | None = None,
        new_key: bool = False,
    ) -> Exchange:
        fingerprint = content_fingerprint(text)
        answers = self.should_answer(room, text)
        # The free quota counts messages the assistant answers: a lobby message that does not
        # mention it costs the sender nothing. A message to answer now is owed its answer from
        # the moment it is stored (the outbox row is in the same transaction).
        on_store = (
            CountedAndOwed(owed=respond, worker_id=self.worker_id, lease_s=self._lease_s)
            if answers
            else None
        )
        user_message, created = await message_repo.append_message(
            self._database,
            room_id=room.id,
            role="user",
            content=text,
            sender_id=user.id,
            dedupe_key=dedupe_key,
            # Without the client's idempotency key the key is a new random one: no look.
            look_first=not new_key,
            meta={
                **(meta or {}),
                "content_sha256": fingerprint,
                **({"route": route} if route else {}),
            },
            in_same_transaction=on_store,
        )
        if created:
            await self._publish(user_message)
        if not created and (user_message.meta or {}).get("content_sha256", fingerprint) != (
            fingerprint
        ):
            raise IdempotencyConflict(
                "this idempotency key was already used for a different message"
            )
        live = current_live()
        if live is not None:
            self.live.adopt(user_message, live)
        assistant_message = None
        try:
            if respond and answers:
                # The sender as this message's transaction left it (quota counted): the
                # answer's paywall and context read it from here, not the database again.
                sender = on_store.counted if created and on_store is not None else None
                assistant_message = await self.answerer.answer(
                    Turn(
                        user=sender or user,
                        room=room,
                        user_message=user_message,
                        user_current=sender is not None,
                    ),
                    # Stored just now under a key nobody else has: no answer to it can exist
                    # yet. (A duplicate of a client's key may have answered it first.)
                    just_stored=created and new_key,
                )
        finally:
            if live is not None:
                self.live.discard(user_message.id, live)
        pending = respond and answers and assistant_message is None
        return Exchange(user_message, assistant_message, created, answer_pending=pending)

    def should_answer(self, room: Room, text: str) -> bool:
        """A direct room always gets an answer; the lobby only when the assistant is named."""
        if room.kind == "direct":
            return True
        # eko/lobby/mentions.py: word-bounded, accent-insensitive, the lobby's persona name.
        return is_mentioned(text, persona_name(room, self._settings))

    async def answer(self, turn: Turn) -> Message | None:
        """Store (once) and return the assistant's answer to a stored user message; None when
        it cannot be answered right now (database busy or unreachable) and is owed instead.

        Runs to the end even if the caller is cancelled (the HTTP client went away)."""
        task = asyncio.create_task(
            self.answerer.answer(turn), name=f"answer:{turn.user_message.id}"
        )
        self._track(task)
        return await asyncio.shield(task)

    async def answer_owed(self, user_message_id: str) -> Message | None:
        """Answer a stored message the outbox says is owed (the recovery loop claimed it for
        this process). Counts against the admission limit like a new message."""
        turn = await self.answerer.owed_turn(user_message_id)
        if turn is None:
            return None
        key = turn.user_message.dedupe_key
        self._inflight[key] = self._inflight.get(key, 0) + 1
        self._answering.add(key)
        task = asyncio.create_task(
            self.answerer.answer(turn),
            name=f"answer-owed:{user_message_id}",
        )
        self._track(task)
        task.add_done_callback(lambda _t: self._leave(key))
        return await asyncio.shield(task)

    async def wait_for_answer(
        self, user_message_id: str, *, timeout_s: float, poll_s: float = 0.5
    ) -> Message | None:
        """The answer to an owed message once the recovery loop has written it, or None after
        `timeout_s` (for a caller that must hand back an answer, not a promise of one)."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        key = reply_dedupe_key(user_message_id)
        while True:
            try:
                async with self._database.session() as session:
                    reply = await message_repo.get_by_dedupe_key(session, dedupe_key=key)
                if reply is not None:
                    return reply
            except Exception as exc:
                if not database_busy_or_unavailable(exc):
                    raise
            if asyncio.get_running_loop().time() + poll_s > deadline:
                return None
            await asyncio.sleep(poll_s)

    async def _publish(self, message: Message) -> None:
        if self._events is not None:
            await self._events.publish(message_created(message))

    def _track(self, task: asyncio.Task[Any]) -> None:
        self._work.add(task)
        task.add_done_callback(self._work.discard)

    async def regenerate(
        self, turn: Turn, reply: Message, *, live: LiveReply | None = None
    ) -> Message:
        """A new version of `reply` (the answer to `turn`'s user message), the old one kept
        (eko/store/message_versions.py). The memory guard is not asked: the user rejected
        an answer, maybe a cached one. Runs to the end even if the caller goes away."""
        token = with_live(live)
        try:
            task = asyncio.create_task(self._regenerate(turn, reply), name=f"regen:{reply.id}")
        finally:
            reset_live(token)
        self._track(task)
        return await asyncio.shield(task)

    async def _regenerate(self, turn: Turn, reply: Message) -> Message:
        live = current_live()
        if live is not None:
            self.live.adopt(turn.user_message, live)
        try:
            return await self.answerer.rewrite(turn, reply)
        finally:
            if live is not None:
                self.live.discard(turn.user_message.id, live)


def new_worker_id() -> str:
    """This process in the outbox's claims: readable in a listing, unique per start."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def content_fingerprint(text: str) -> str:
    """What the idempotency check compares: the stored (validated) content."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
