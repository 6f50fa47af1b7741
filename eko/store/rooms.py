"""Room repository: rooms and their members."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.models import Room, RoomMember

ROOM_KINDS = ("direct", "lobby")


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
