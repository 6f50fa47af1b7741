"""Files attached to a room: their text becomes a document of the room's own docs scope.

`add` checks the file (its kind, its size, its text: eko/chat/docs/extract.py), chunks and
embeds the text before any transaction, then stores the chunks, their vectors and the
attachment's row in one transaction: nothing is stored when any step fails. A file of the same
name replaces the earlier one. The room's scope exists while the room has files (the last one
removed drops it): the chat engine searches it on every turn of a room where it exists
(eko/chat/engine/context_loader.py, guardrails.py rule 8); nothing else may read it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import PurePosixPath

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from eko.chat.docs.extract import TYPE_OF, Unreadable, extract_text, kind_of
from eko.chat.docs.service import DocsService, room_scope
from eko.store import attachments as attachment_repo
from eko.store import doc_chunks as doc_repo
from eko.store.chat_models import RoomAttachment
from eko.store.db import Database

log = structlog.get_logger("eko.chat")

ROOM_SCOPE_DESCRIPTION = "Files attached to this conversation"


class TooLarge(ValueError):
    """The file, or the text in it, is over the limit."""


@dataclass(frozen=True, slots=True)
class AttachmentLimits:
    max_bytes: int = 10 * 1024 * 1024
    max_chars: int = 300_000


class Attachments:
    def __init__(
        self, *, database: Database, docs: DocsService, limits: AttachmentLimits | None = None
    ) -> None:
        self._database = database
        self._docs = docs
        self.limits = limits or AttachmentLimits()

    async def add(
        self,
        *,
        room_id: str,
        filename: str,
        content_type: str | None,
        data: bytes,
        uploaded_by: int | None,
    ) -> RoomAttachment:
        """Extract, chunk, embed and store one file. Raises Unsupported (not text, Markdown or
        PDF), TooLarge, Unreadable (no text, corrupt) or EmbeddingError; stores nothing then."""
        name = clean_filename(filename)
        kind = kind_of(name, content_type)
        if len(data) > self.limits.max_bytes:
            raise TooLarge(
                f"{name!r} is {len(data):,} bytes; the limit is {self.limits.max_bytes:,}"
                " (EKO_ATTACHMENT_MAX_BYTES)"
            )
        # A PDF is parsed off the event loop: a large one takes a while.
        extracted = await asyncio.to_thread(extract_text, data, kind)
        if len(extracted.text) > self.limits.max_chars:
            raise TooLarge(
                f"{name!r} holds {len(extracted.text):,} characters of text; the limit is"
                f" {self.limits.max_chars:,} (EKO_ATTACHMENT_MAX_CHARS)"
            )
        prepared = await self._docs.prepare(extracted.text, fmt=extracted.fmt)
        if not prepared.chunks:
            raise Unreadable("the file has no text")
        async with self._database.session() as session:
            await self._docs.store(
                session,
                scope=room_scope(room_id),
                source=name,
                prepared=prepared,
                description=ROOM_SCOPE_DESCRIPTION,
                room_id=room_id,
            )
            row = await attachment_repo.put_attachment(
                session,
                room_id=room_id,
                filename=name,
                content_type=TYPE_OF[kind],
                size_bytes=len(data),
                chars=len(extracted.text),
                chunks=len(prepared.chunks),
                uploaded_by=uploaded_by,
            )
        log.info(
            "attachments.added",
            room_id=room_id,
            kind=kind,
            size_bytes=len(data),
            chars=len(extracted.text),
            chunks=len(prepared.chunks),
        )
        return row

    async def list(self, *, room_id: str) -> list[RoomAttachment]:
        async with self._database.session() as session:
            return list(await attachment_repo.list_attachments(session, room_id=room_id))

    async def delete(self, *, room_id: str, attachment_id: str) -> bool:
        """Delete an attachment, its chunks and their vectors; False when there is none."""
        async with self._database.session() as session:
            row = await attachment_repo.get_attachment(
                session, room_id=room_id, attachment_id=attachment_id
            )
            if row is None:
                return False
            scope = await doc_repo.get_scope(session, name=room_scope(room_id))
            if scope is not None:
                await self._docs.delete_source(session, scope_id=scope.id, source=row.filename)
            await attachment_repo.delete_attachment(session, attachment=row)
            await session.flush()
            # The room's scope exists while the room has files (what the engine reads).
            if not await attachment_repo.has_attachments(session, room_id=room_id):
                await self._docs.drop_scope(session, name=room_scope(room_id))
        return True

    async def forget_room(self, session: AsyncSession, *, room_id: str) -> None:
        """Delete the room's scope with its chunks and vectors in `session`, before the room
        goes (its rows would go by cascade, the vectors would not)."""
        await self._docs.drop_scope(session, name=room_scope(room_id))


def clean_filename(filename: str) -> str:
    """The file's own name (no directory), without control characters, at most 200 chars."""
    name = PurePosixPath((filename or "").replace("\\", "/")).name
    name = "".join(ch for ch in name if ch.isprintable()).strip()
    if len(name) > 200:
        stem, dot, suffix = name.rpartition(".")
        name = f"{stem[: 199 - len(suffix)]}.{suffix}" if dot and len(suffix) < 10 else name[:200]
    return name or "attachment"
