"""Writing the assistant's answer to a stored user message: once, or owed.

The short-circuit stages (paywall, memory guard) then the writer make a draft; the reply is
stored under a unique key per user message, in one transaction with the end of the outbox's
debt and the reply's after-reply jobs. A failure after the user message was stored never turns
into an error for the sender: a transient database failure is retried twice, then (like a bug)
the message is given back to the outbox, which answers it later (eko/chat/recovery.py).
A regeneration writes a new version of a stored reply, under the same per-message lock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from eko.chat.pipeline import Draft, Note, ReadsAhead, ShortCircuit, Turn, Writer
from eko.chat.streaming import LiveReply, current_live
from eko.config import Settings
from eko.events.payloads import message_created, message_updated
from eko.events.types import EventBus
from eko.jobs.after_reply import AfterReplyJobs
from eko.jobs.queue import JobQueue
from eko.llm.deadline import message_deadline
from eko.llm.waiting import waiting_turn
from eko.memory.recent import RecentReader
from eko.store import answer_outbox as outbox
from eko.store import message_versions as version_repo
from eko.store import messages as message_repo
from eko.store.db import Database
from eko.store.locks import KeyedLocks
from eko.store.models import Message, Room, User
from eko.store.outage import database_busy_or_unavailable

log = structlog.get_logger("eko.chat")

# A transient database failure while answering is retried after these pauses, then the message
# is left owed to the recovery loop.
TRANSIENT_RETRY_PAUSES_S = (0.5, 1.5)


def reply_dedupe_key(user_message_id: str) -> str:
    return f"reply:{user_message_id}"


class Answerer:
    def __init__(
        self,
        *,
        database: Database,
        writer: Writer,
        settings: Settings,
        worker_id: str,
        short_circuits: Sequence[ShortCircuit] = (),
        readers: Sequence[ReadsAhead] = (),
        after_reply: AfterReplyJobs | None = None,
        jobs: JobQueue | None = None,
        events: EventBus | None = None,
        recent: RecentReader | None = None,
    ) -> None:
        self._database = database
        self.writer = writer
        self._settings = settings
        # In this order: the first short-circuit that returns a Draft answers.
        self.short_circuits = list(short_circuits)
        # What the writer's path reads before the model (the context loader's user profile),
        # read in the same session as the turn's window when no short-circuit will answer.
        self._readers = list(readers)
        # After-reply hooks run as jobs (off the request path, keyed by room, persisted).
        self.after_reply = after_reply
        self._jobs = jobs
        # message.created / message.updated for live clients of /v1/events.
        self._events = events
        # The message's recent window, read once before the writer and carried by the turn
        # to the context loader, memory and the chain (one rule: eko/memory/recent.py).
        self._recent = recent or RecentReader.from_settings(settings)
        # This process in the answer outbox (eko/store/answer_outbox.py): the leases it holds
        # are on the user messages it is answering now.
        self.worker_id = worker_id
        # One lock per user message being answered in this process.
        self._answering = KeyedLocks()
        self._answering_ids: set[str] = set()

    @property
    def answering_ids(self) -> list[str]:
        """The user messages this process is answering now (the leases it renews)."""
        return list(self._answering_ids)

    async def owed_turn(self, user_message_id: str) -> Turn | None:
        """The turn of a message the outbox says is owed; None (and the debt dropped) when its
        room or its sender was deleted since: nobody is waiting for that answer."""
        async with self._database.session() as session:
            message = await session.get(Message, user_message_id)
            room = await session.get(Room, message.room_id) if message is not None else None
            sender = (
                await session.get(User, message.sender_id)
                if message is not None and message.sender_id is not None
                else None
            )
            if message is None or room is None or sender is None:
                await outbox.settle(session, user_message_id)
                return None
        return Turn(user=sender, room=room, user_message=message)

    async def answer(self, turn: Turn, *, just_stored: bool = False) -> Message | None:
        """The stored answer (written now, or found), or None when it could not be written and
        the message is owed instead. `just_stored`: the caller stored the message a moment ago
        (no answer to look for first; the look under the room's lock when storing still runs)."""
        # Concurrent duplicate requests wait for the first answer instead of calling the
        # model again. Across workers, the unique dedupe key still stores one answer.
        message_id = turn.user_message.id
        async with self._answering.hold(message_id):
            self._answering_ids.add(message_id)
            try:
                for pause_s in (*TRANSIENT_RETRY_PAUSES_S, None):
                    try:
                        return await self._answer_once(turn, look_first=not just_stored)
                    except Exception as exc:
                        transient = database_busy_or_unavailable(exc)
                        if transient and pause_s is not None:
                            await asyncio.sleep(pause_s)  # a busy pool often frees up soon
                            just_stored = False  # the failed try may have stored the answer
                            continue
                        # Stored, so owed: the outbox row stays, and the message is answered
                        # by the recovery loop (eko/chat/recovery.py) — when the database
                        # serves again, or, for a bug, on ever rarer retries.
                        if transient:
                            log.warning(
                                "chat.answer.deferred",
                                message_id=message_id,
                                error=type(exc).__name__,
                            )
                        else:
                            log.exception("chat.answer.failed", message_id=message_id)
                        await self._give_back(message_id, exc)
                        break
                return None
            finally:
                self._answering_ids.discard(message_id)

    async def _give_back(self, message_id: str, exc: BaseException) -> None:
        try:
            await outbox.release(
                self._database,
                user_message_id=message_id,
                worker_id=self.worker_id,
                retry_in_s=self._settings.chat_answer_retry_s,
                error=f"{type(exc).__name__}: {exc}",
            )
        except Exception:  # the database is still down: the lease runs out by itself
            log.warning("chat.answer.release_failed", message_id=message_id)

    async def _answer_once(self, turn: Turn, *, look_first: bool = True) -> Message:
        dedupe_key = reply_dedupe_key(turn.user_message.id)
        if look_first:
            async with self._database.session() as session:
                existing = await message_repo.get_by_dedupe_key(session, dedupe_key=dedupe_key)
                if existing is not None:
                    await outbox.settle(session, turn.user_message.id)
            if existing is not None:
                return existing
        # One deadline for every model call made for this message (orchestrator, writer and
        # their fallbacks): a hung provider cannot hold a person longer than this. It stops
        # counting while a call waits in the local model's line, which the person following
        # the reply live is told about (eko/llm/waiting.py).
        live = current_live()
        with (
            message_deadline(self._settings.chat_message_deadline_s),
            waiting_turn(_listener(live)),
        ):
            draft = await self._draft(turn)
        if live is not None and live.target is live:
            live.annotate(draft)
        reply, created = await message_repo.append_message(
            self._database,
            room_id=turn.room.id,
            role="assistant",
            type=draft.type,
            content=draft.content,
            reasoning=draft.reasoning,
            tool_calls=draft.tool_calls,
            meta=draft.meta.to_json(),
            dedupe_key=dedupe_key,
            reply_to_id=turn.user_message.id,
            look_first=False,  # looked above, or its message just stored (its lease is ours)
            # One transaction: the reply, the end of what is owed, and its background work.
            in_same_transaction=self._on_reply(turn, draft),
        )
        if created:
            if self._jobs is not None:
                self._jobs.wake()
            await self._publish(reply)
        return reply

    def _on_reply(self, turn: Turn, draft: Draft) -> message_repo.SessionHook:
        after_reply, jobs = self.after_reply, self._jobs

        async def settled_with_jobs(session: AsyncSession, reply: Message) -> None:
            await outbox.settle(session, turn.user_message.id)
            if draft.stored_with is not None:
                await draft.stored_with(session)
            if after_reply is not None and jobs is not None:
                await after_reply.enqueue_in(session, jobs, turn, reply)

        return settled_with_jobs

    async def rewrite(self, turn: Turn, reply: Message) -> Message:
        """A new version of `reply`, the old one kept (eko/store/message_versions.py). The
        memory guard is not asked: the user rejected an answer, maybe a cached one."""
        async with self._answering.hold(turn.user_message.id):
            live = current_live()
            with (
                message_deadline(self._settings.chat_message_deadline_s),
                waiting_turn(_listener(live)),
            ):
                draft = await self._draft(turn, skip=("memory_guard",))
            if live is not None and live.target is live:
                live.annotate(draft)
            updated = await version_repo.replace_with_new_version(
                self._database,
                message_id=reply.id,
                content=draft.content,
                type=draft.type,
                meta=draft.meta.to_json(),
                reasoning=draft.reasoning,
                tool_calls=draft.tool_calls,
            )
        if self._events is not None:
            await self._events.publish(message_updated(updated))
        await self._enqueue_after_reply(turn, updated)
        return updated

    async def _publish(self, message: Message) -> None:
        if self._events is not None:
            await self._events.publish(message_created(message))

    async def _enqueue_after_reply(self, turn: Turn, reply: Message) -> None:
        if self.after_reply is None or self._jobs is None:
            return
        try:
            await self.after_reply.enqueue(self._jobs, turn, reply)
        except Exception:  # the answer is stored: a lost memory update must not fail it
            log.exception("chat.after_reply.enqueue_failed", reply_id=reply.id)

    async def _draft(self, turn: Turn, *, skip: Sequence[str] = ()) -> Draft:
        turn = await self._current(turn, skip=skip)
        notes: dict[str, Any] = {}
        for stage in self.short_circuits:
            if stage.name in skip:
                continue
            answer = await stage.respond(turn)
            if isinstance(answer, Note):
                notes.update(answer.meta)
            elif answer is not None:
                if answer.meta.answered_by is None:
                    answer.meta.answered_by = stage.name
                return answer
        draft = await self.writer.write(turn)
        if notes:
            draft.meta.set(**notes)
        if turn.room.instructions:
            draft.meta.caller_instructions = True
        return draft

    async def _current(self, turn: Turn, *, skip: Sequence[str] = ()) -> Turn:
        """The turn with its user as stored now (the quota counted this message), its recent
        window and what the short-circuits read ahead (ReadsAhead): one session for all,
        before the paywall, the guard and the writer."""
        if turn.user_current and turn.recent is not None:
            return turn
        async with self._database.session() as session:
            read_ahead = {
                stage.name: await stage.read_ahead(session, turn)
                for stage in self.short_circuits
                if isinstance(stage, ReadsAhead) and stage.name not in skip
            }
            user = (
                turn.user
                if turn.user_current
                else await session.get(User, turn.user.id, populate_existing=True)
            )
            window = turn.recent
            answered = any(
                getattr(value, "answers", False) is True for value in read_ahead.values()
            )
            if window is None and not answered:
                window = await self._recent.read(
                    session,
                    room_id=turn.room.id,
                    room_kind=turn.room.kind,
                    before_seq=turn.user_message.seq,
                    known_names={user.id: user.display_name} if user is not None else None,
                )
            if not answered:
                for reader in self._readers:
                    read_ahead[reader.name] = await reader.read_ahead(session, turn)
        if user is None:  # deleted meanwhile: the stages read (and report) it themselves
            return replace(turn, recent=window, read_ahead=read_ahead)
        return replace(turn, user=user, user_current=True, recent=window, read_ahead=read_ahead)


def _listener(live: LiveReply | None) -> LiveReply | None:
    """The live reply this request writes (not one it only follows) hears its place in line."""
    return live if live is not None and live.target is live else None
