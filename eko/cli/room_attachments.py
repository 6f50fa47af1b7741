"""`eko rooms attach|attachments|detach`: files attached to a room (text, Markdown, PDF), whose
text the chat engine searches on that room's turns (eko/chat/docs/attachments.py)."""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from eko.cli.common import console, fail, migrated_services, run
from eko.cli.ids import resolve_id_or_exit

ROOM_HELP = "Room id (or a unique prefix of it)."


def attach(
    room: Annotated[str, typer.Argument(help=ROOM_HELP)],
    file: Annotated[Path, typer.Argument(help="A .txt, .md or .pdf file.")],
) -> None:
    """Attach a file to a room: its text is chunked and embedded into the room's own docs
    scope (a file of the same name is replaced). Exits 2 on a file that cannot be attached."""
    from eko.chat.docs.attachments import TooLarge
    from eko.chat.docs.extract import Unreadable, Unsupported
    from eko.embed.base import EmbeddingError
    from eko.store.models import Room

    if not file.is_file():
        fail(f"no file {str(file)!r}")
    content_type = mimetypes.guess_type(file.name)[0] or ""

    async def go() -> tuple[str, int, int]:
        async with migrated_services() as services:
            async with services.database.session() as session:
                room_id = await resolve_id_or_exit(
                    session, Room.id, room, what="room", listing="eko rooms list"
                )
            attachments = services.engine.attachments
            if file.stat().st_size > attachments.limits.max_bytes:
                fail(
                    f"{file.name}: {file.stat().st_size:,} bytes, over the"
                    f" {attachments.limits.max_bytes:,}-byte limit",
                    fix="raise EKO_ATTACHMENT_MAX_BYTES, or attach a smaller file",
                    code=2,
                )
            try:
                row = await attachments.add(
                    room_id=room_id,
                    filename=file.name,
                    content_type=content_type,
                    data=file.read_bytes(),
                    uploaded_by=None,
                )
            except Unsupported as exc:
                fail(str(exc), code=2)
            except (TooLarge, Unreadable) as exc:
                fail(f"{file.name}: {exc}; nothing was stored", code=2)
            except EmbeddingError as exc:
                fail(f"the embedder failed: {exc}", fix="`eko doctor` checks the embedder")
            return room_id, row.chars, row.chunks

    room_id, chars, chunks = run(go())
    console.print(
        f"attached {escape(file.name)} to room {room_id}: {chars:,} characters, {chunks} chunk(s)"
    )


def attachments(room: Annotated[str, typer.Argument(help=ROOM_HELP)]) -> None:
    """The files attached to a room: id, name, type, size, chunks, when."""
    from eko.store import attachments as attachment_repo
    from eko.store.models import Room

    async def go() -> tuple[str, list[tuple[str, str, str, int, int, str]]]:
        async with migrated_services() as services, services.database.session() as session:
            room_id = await resolve_id_or_exit(
                session, Room.id, room, what="room", listing="eko rooms list"
            )
            rows = await attachment_repo.list_attachments(session, room_id=room_id)
            return room_id, [
                (
                    r.id,
                    r.filename,
                    r.content_type,
                    r.size_bytes,
                    r.chunks,
                    f"{r.created_at:%Y-%m-%d %H:%M}",
                )
                for r in rows
            ]

    room_id, rows = run(go())
    table = Table(title=f"{len(rows)} attachment(s) in room {room_id}")
    for column in ("id", "file", "type", "bytes", "chunks", "attached"):
        table.add_column(column, no_wrap=column == "id")
    for attachment_id, name, kind, size, chunks, when in rows:
        table.add_row(attachment_id, escape(name), kind, f"{size:,}", str(chunks), when)
    console.print(table)


def detach(
    room: Annotated[str, typer.Argument(help=ROOM_HELP)],
    attachment: Annotated[str, typer.Argument(help="Attachment id (or a unique prefix).")],
) -> None:
    """Remove a file from a room: its text leaves the room's docs scope."""
    from eko.store.chat_models import RoomAttachment
    from eko.store.models import Room

    async def go() -> str:
        async with migrated_services() as services:
            async with services.database.session() as session:
                room_id = await resolve_id_or_exit(
                    session, Room.id, room, what="room", listing="eko rooms list"
                )
                attachment_id = await resolve_id_or_exit(
                    session,
                    RoomAttachment.id,
                    attachment,
                    what="attachment",
                    listing=f"eko rooms attachments {room_id}",
                )
            if not await services.engine.attachments.delete(
                room_id=room_id, attachment_id=attachment_id
            ):
                fail(
                    f"attachment {attachment_id} is not in room {room_id}",
                    fix=f"see `eko rooms attachments {room_id}`",
                )
            return attachment_id

    console.print(f"removed attachment {run(go())}")
