"""Repository of the files attached to rooms (their text: the room's docs scope's chunks)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.chat_models import RoomAttachment


async def list_attachments(session: AsyncSession, *, room_id: str) -> Sequence[RoomAttachment]:
    """The room's attachments, oldest first."""
    result = await session.execute(
        select(RoomAttachment)
        .where(RoomAttachment.room_id == room_id)
        .order_by(RoomAttachment.created_at, RoomAttachment.id)
    )
    return result.scalars().all()


async def get_attachment(
    session: AsyncSession, *, room_id: str, attachment_id: str
) -> RoomAttachment | None:
    result = await session.execute(
        select(RoomAttachment).where(
            RoomAttachment.room_id == room_id, RoomAttachment.id == attachment_id
        )
    )
    return result.scalar_one_or_none()


async def has_attachments(session: AsyncSession, *, room_id: str) -> bool:
    result = await session.execute(
        select(RoomAttachment.id).where(RoomAttachment.room_id == room_id).limit(1)
    )
    return result.first() is not None


async def put_attachment(
    session: AsyncSession,
    *,
    room_id: str,
    filename: str,
    content_type: str,
    size_bytes: int,
    chars: int,
    chunks: int,
    uploaded_by: int | None,
) -> RoomAttachment:
    """Record a file (a new row; the row of a file of the same name is replaced)."""
    await session.execute(
        delete(RoomAttachment).where(
            RoomAttachment.room_id == room_id, RoomAttachment.filename == filename
        )
    )
    row = RoomAttachment(
        room_id=room_id,
        filename=filename,
        content_type=content_type,
        size_bytes=size_bytes,
        chars=chars,
        chunks=chunks,
        uploaded_by=uploaded_by,
    )
    session.add(row)
    await session.flush()
    return row


async def delete_attachment(session: AsyncSession, *, attachment: RoomAttachment) -> None:
    await session.delete(attachment)
