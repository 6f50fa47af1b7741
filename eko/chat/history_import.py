"""Importing a conversation's history into a room: its turns stored at once, remembered later.

`HistoryImport.store` checks every turn first (nothing is stored when one is wrong), then
appends them all in order in one transaction (eko/store/messages.py: append_many) with their
speakers and dates. Imported turns are not questions: none is counted against the free quota,
none is owed an answer (no answer-outbox row), no after-reply job runs. One job indexes them
for recall by meaning, batch by batch (eko/jobs/turn_indexing.py); full-text recall finds them
as soon as they are stored.

Idempotency is per message: a turn's `client_id` (or, without one, its position and content)
makes its key, so a retried import stores only what is missing, and a key sent again with
different content is refused before anything is stored.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from sqlalchemy import select

from eko.events.types import Event, EventBus
from eko.jobs.queue import JobQueue
from eko.jobs.turn_indexing import enqueue_turn_indexing
from eko.store import messages as message_repo
from eko.store.db import Database
from eko.store.models import Message, Room, User

IMPORTED = "messages.imported"
ROLES = ("user", "assistant")
MAX_NAME_CHARS = 100
MAX_CLIENT_ID_CHARS = 100


@dataclass(frozen=True, slots=True)
class ImportTurn:
    """One turn as given (the API's body, the CLI's file), before any check."""

    role: str
    content: str
    created_at: datetime | None = None
    # The speaker's display name ("Caroline"): how the turn is shown and embedded.
    name: str | None = None
    client_id: str | None = None


@dataclass(frozen=True, slots=True)
class TurnError:
    index: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"message {self.index}: {self.field}: {self.message}"


class ImportInvalid(ValueError):
    """Some turns are wrong: nothing was stored."""

    def __init__(self, errors: Sequence[TurnError]) -> None:
        self.errors = list(errors)
        shown = "; ".join(str(e) for e in self.errors[:5])
        more = f" (and {len(self.errors) - 5} more)" if len(self.errors) > 5 else ""
        super().__init__(f"{len(self.errors)} invalid messages: {shown}{more}")


class ImportConflict(ValueError):
    """A client id was imported before with different content: nothing was stored."""

    def __init__(self, indexes: Sequence[int]) -> None:
        self.indexes = list(indexes)
        super().__init__(
            "client ids already imported with a different message, at "
            + ", ".join(str(i) for i in self.indexes[:10])
        )


@dataclass(frozen=True, slots=True)
class ImportResult:
    messages: list[Message]
    # How many were stored now (the others were imported before).
    created: int
    # The indexing job (None: nothing new, or one queued already covers these turns).
    index_job_id: int | None


@dataclass(frozen=True, slots=True)
class _Checked:
    role: Literal["user", "assistant"]
    content: str
    created_at: datetime | None
    name: str | None
    token: str
    fingerprint: str


class HistoryImport:
    def __init__(
        self,
        *,
        database: Database,
        jobs: JobQueue,
        events: EventBus | None,
        max_messages: int,
        max_message_chars: int,
    ) -> None:
        self._database = database
        self._jobs = jobs
        self._events = events
        self.max_messages = max_messages
        self._max_chars = max_message_chars

    def check(self, turns: Sequence[ImportTurn]) -> None:
        """Raise ImportInvalid with every wrong turn (the CLI checks a file before opening
        the database)."""
        self._checked(turns)

    async def store(self, *, user: User, room: Room, turns: Sequence[ImportTurn]) -> ImportResult:
        """Check, then store every turn in order in one transaction (user turns as `user`'s),
        then queue their indexing. Raises ImportInvalid or ImportConflict with nothing stored."""
        checked = self._checked(turns)
        keys = [f"import:{room.id}:{user.id}:{c.token}" for c in checked]
        await self._refuse_conflicts(keys, checked)
        rows = [
            message_repo.NewMessage(
                role=c.role,
                content=c.content,
                dedupe_key=key,
                sender_id=user.id if c.role == "user" else None,
                meta={
                    "content_sha256": c.fingerprint,
                    "imported": True,
                    **({"speaker": c.name} if c.name else {}),
                },
                created_at=c.created_at,
            )
            for c, key in zip(checked, keys, strict=True)
        ]
        stored = await message_repo.append_many(self._database, room_id=room.id, messages=rows)
        messages = [message for message, _ in stored]
        new = [message for message, created in stored if created]
        job_id = None
        if new:
            job_id = await enqueue_turn_indexing(self._jobs, room.id)
            if self._events is not None:
                await self._events.publish(
                    Event(
                        type=IMPORTED,
                        room_id=room.id,
                        data={
                            "count": len(new),
                            "first_seq": new[0].seq,
                            "last_seq": new[-1].seq,
                        },
                    )
                )
        return ImportResult(messages, len(new), job_id)

    def _checked(self, turns: Sequence[ImportTurn]) -> list[_Checked]:
        errors: list[TurnError] = []
        if not turns:
            raise ImportInvalid([TurnError(0, "messages", "no message to import")])
        if len(turns) > self.max_messages:
            raise ImportInvalid(
                [
                    TurnError(
                        self.max_messages,
                        "messages",
                        f"{len(turns)} messages; at most {self.max_messages} per import "
                        "(EKO_IMPORT_MAX_MESSAGES): import in parts",
                    )
                ]
            )
        checked: list[_Checked] = []
        seen: dict[str, int] = {}
        for index, turn in enumerate(turns):
            found = _turn_errors(index, turn, self._max_chars)
            if turn.client_id is not None:
                if turn.client_id in seen:
                    found.append(
                        TurnError(index, "client_id", f"repeats message {seen[turn.client_id]}'s")
                    )
                seen.setdefault(turn.client_id, index)
            if found:
                errors.extend(found)
                continue
            checked.append(_checked_turn(index, turn))
        if errors:
            raise ImportInvalid(errors)
        return checked

    async def _refuse_conflicts(self, keys: list[str], checked: list[_Checked]) -> None:
        fingerprints = dict(zip(keys, (c.fingerprint for c in checked), strict=True))
        conflicts: list[int] = []
        async with self._database.session() as session:
            for start in range(0, len(keys), 500):
                rows = await session.execute(
                    select(Message.dedupe_key, Message.meta).where(
                        Message.dedupe_key.in_(keys[start : start + 500])
                    )
                )
                for key, meta in rows:
                    if (meta or {}).get("content_sha256") != fingerprints[key]:
                        conflicts.append(keys.index(key))
        if conflicts:
            raise ImportConflict(sorted(conflicts))


def _turn_errors(index: int, turn: ImportTurn, max_chars: int) -> list[TurnError]:
    errors: list[TurnError] = []
    if turn.role not in ROLES:
        errors.append(TurnError(index, "role", f"{turn.role!r} is neither user nor assistant"))
    text = turn.content.strip()
    if not text:
        errors.append(TurnError(index, "content", "empty"))
    elif len(text) > max_chars:
        errors.append(
            TurnError(index, "content", f"{len(text)} characters; the limit is {max_chars}")
        )
    if turn.name is not None and len(turn.name.strip()) > MAX_NAME_CHARS:
        errors.append(TurnError(index, "name", f"longer than {MAX_NAME_CHARS} characters"))
    if turn.created_at is not None:
        try:
            _utc(turn.created_at)
        except (OverflowError, ValueError):
            errors.append(TurnError(index, "created_at", "out of range"))
    if turn.client_id is not None and not (0 < len(turn.client_id.strip()) <= MAX_CLIENT_ID_CHARS):
        errors.append(TurnError(index, "client_id", f"1 to {MAX_CLIENT_ID_CHARS} characters"))
    return errors


def _checked_turn(index: int, turn: ImportTurn) -> _Checked:
    content = turn.content.strip()
    name = (turn.name or "").strip() or None
    when = _utc(turn.created_at) if turn.created_at is not None else None
    fingerprint = hashlib.sha256(
        json.dumps(
            [turn.role, name, content, when.isoformat() if when else None], ensure_ascii=False
        ).encode("utf-8", "surrogatepass")
    ).hexdigest()
    # Without a client id, the turn's position and content: the same batch sent again is the
    # same messages.
    token = f"c:{turn.client_id.strip()}" if turn.client_id else f"p:{index}:{fingerprint[:32]}"
    role: Literal["user", "assistant"] = "user" if turn.role == "user" else "assistant"
    return _Checked(role, content, when, name, token, fingerprint)


def _utc(moment: datetime) -> datetime:
    """A naive date is taken as UTC."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
