"""Room repository: rooms and their members."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.models import Message, Room, RoomMember

ROOM_KINDS = ("direct", "lobby")
TITLE_CHARS = 60


async def create_room(
    session: AsyncSession, *, kind: str, name: str, persona: str, created_by: int | None
) -> Room:
    if kind not in ROOM_KINDS:
        raise ValueError(f"room kind must be one of {ROOM_KINDS}")
    room = Room(kind=kind, name=name, persona=persona, created_by=created_by)
    session.add(room)
    await session.flush()
    if created_by is not None:
        session.add(RoomMember(room_id=room.id, user_id=created_by))
        await session.flush()
    return room


async def count_created(session: AsyncSession, *, user_id: int, kind: str) -> int:
    """How many rooms of this kind the user created (and that still exist)."""
    result = await session.execute(
        select(func.count()).select_from(Room).where(Room.created_by == user_id, Room.kind == kind)
    )
    return int(result.scalar_one())


async def get_room(session: AsyncSession, *, room_id: str) -> Room | None:
    return await session.get(Room, room_id)


async def add_member(session: AsyncSession, *, room_id: str, user_id: int) -> None:
    if await is_member(session, room_id=room_id, user_id=user_id):
        return
    session.add(RoomMember(room_id=room_id, user_id=user_id))
    await session.flush()


async def is_member(session: AsyncSession, *, room_id: str, user_id: int) -> bool:
    result = await session.execute(
        select(RoomMember.user_id).where(
            RoomMember.room_id == room_id, RoomMember.user_id == user_id
        )
    )
    return result.first() is not None


async def member_ids(session: AsyncSession, *, room_id: str) -> Sequence[int]:
    result = await session.execute(
        select(RoomMember.user_id).where(RoomMember.room_id == room_id).order_by(RoomMember.user_id)
    )
    return result.scalars().all()


async def list_rooms_for_user(
    session: AsyncSession, *, user_id: int, limit: int = 200
) -> Sequence[Room]:
    result = await session.execute(
        select(Room)
        .join(RoomMember, RoomMember.room_id == Room.id)
        .where(RoomMember.user_id == user_id)
        .order_by(Room.created_at.desc())
        .limit(limit)
    )
    return result.scalars().all()


async def rename_room(session: AsyncSession, *, room: Room, name: str) -> Room:
    room.name = name
    await session.flush()
    return room


async def set_instructions(session: AsyncSession, *, room: Room, instructions: str | None) -> Room:
    room.instructions = instructions
    await session.flush()
    return room


async def delete_room(session: AsyncSession, *, room_id: str) -> None:
    """The room and everything in it. Its messages go first, explicitly, so the SQLite
    full-text triggers see each delete; the rest (members, versions, lobby and memory rows)
    follows by ON DELETE CASCADE."""
    await session.execute(delete(Message).where(Message.room_id == room_id))
    await session.execute(delete(Room).where(Room.id == room_id))
    await session.flush()


async def first_user_messages(session: AsyncSession, *, room_ids: Sequence[str]) -> dict[str, str]:
    """Each room's first user message (its content), for the rooms that have one."""
    if not room_ids:
        return {}
    first = (
        select(Message.room_id, func.min(Message.seq).label("seq"))
        .where(Message.room_id.in_(room_ids), Message.role == "user")
        .group_by(Message.room_id)
        .subquery()
    )
    rows = await session.execute(
        select(Message.room_id, Message.content).join(
            first, (Message.room_id == first.c.room_id) & (Message.seq == first.c.seq)
        )
    )
    return {row[0]: row[1] for row in rows}


def room_title(name: str, first_message: str | None, *, default_name: bool) -> str:
    """The name, unless it is still the default one and the room has a first message: then
    that message on one line, trimmed to TITLE_CHARS."""
    if not default_name or not first_message:
        return name
    line = " ".join(first_message.split())
    if not line:
        return name
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"
