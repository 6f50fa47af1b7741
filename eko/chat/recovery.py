"""The answer outbox's loop: every stored message owed an answer gets one, whatever crashed.

Each server process runs one (started with the app). Every `chat_recovery_poll_s` it
  1. renews the leases on the messages this process is answering (so nobody else takes them),
  2. claims messages whose lease ran out — their process died (a `kill -9`, a lost machine), or
     gave one back after a transient database failure — and answers them, within what the
     admission limit leaves free.
The first pass runs at start-up: a restarted server answers what the crash left owed once the
dead process's leases run out (`chat_answer_lease_s`) — at once on SQLite, whose database has
one server process. Exactly once: a reply is stored under a
unique key per user message, and storing it deletes the outbox row in the same transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any, Protocol

import structlog

from eko.store import answer_outbox as outbox
from eko.store.db import Database
from eko.store.models import Message

log = structlog.get_logger("eko.chat")


class OwedAnswers(Protocol):
    """What the loop needs of the chat service (eko/chat/service.py)."""

    worker_id: str

    @property
    def answering_ids(self) -> list[str]: ...

    @property
    def inflight(self) -> int: ...

    @property
    def max_inflight(self) -> int: ...

    async def answer_owed(self, user_message_id: str) -> Message | None: ...


class AnswerRecovery:
    def __init__(
        self,
        database: Database,
        chat: OwedAnswers,
        *,
        lease_s: float,
        poll_s: float,
        sole_server: bool = False,
    ) -> None:
        self._database = database
        self._chat = chat
        self._lease_s = lease_s
        self._poll_s = poll_s
        # Renew well before a lease runs out, even with a slow poll.
        self._renew_every_s = min(poll_s, lease_s / 3)
        self._task: asyncio.Task[None] | None = None
        self._answers: set[asyncio.Task[Any]] = set()
        self._stopping = asyncio.Event()
        # A SQLite database has one server process (scale-out needs PostgreSQL): at its start,
        # every lease another process holds is a dead process's, and need not be waited out.
        self._takeover = sole_server

    def start(self) -> None:
        if self._task is None:
            self._stopping.clear()
            self._task = asyncio.create_task(self._loop(), name="eko.answer-recovery")

    async def aclose(self) -> None:
        """Stop claiming; answers already claimed run on (the chat service drains them)."""
        self._stopping.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        next_claim = 0.0
        while not self._stopping.is_set():
            try:
                await self.renew()
                if time.monotonic() >= next_claim:
                    await self.claim_and_answer()
                    next_claim = time.monotonic() + self._poll_s
            except asyncio.CancelledError:
                raise
            except Exception:  # the database is down: the next pass tries again
                log.warning("chat.recovery.pass_failed", exc_info=True)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self._renew_every_s)

    async def renew(self) -> int:
        return await outbox.renew(
            self._database,
            worker_id=self._chat.worker_id,
            user_message_ids=self._chat.answering_ids,
            lease_s=self._lease_s,
        )

    async def claim_and_answer(self) -> list[str]:
        """One pass: claim what is owed and due (within the admission limit) and start
        answering it; returns the claimed user message ids."""
        room = self._chat.max_inflight - self._chat.inflight
        claimed = await outbox.claim_due(
            self._database,
            worker_id=self._chat.worker_id,
            lease_s=self._lease_s,
            limit=room,
            other_workers_dead=self._takeover,
        )
        self._takeover = False
        for message_id in claimed:
            log.info("chat.recovery.answering", message_id=message_id)
            task = asyncio.create_task(self._answer(message_id), name=f"recover:{message_id}")
            self._answers.add(task)
            task.add_done_callback(self._answers.discard)
        return claimed

    async def _answer(self, message_id: str) -> None:
        try:
            await self._chat.answer_owed(message_id)
        except Exception:  # a bug in one answer must not stop the others; the lease expires
            log.exception("chat.recovery.answer_failed", message_id=message_id)

    async def settle(self) -> None:
        """Wait for the answers this loop started (tests, shutdown)."""
        while self._answers:
            await asyncio.gather(*list(self._answers), return_exceptions=True)
