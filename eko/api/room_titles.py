"""Rooms as a client lists them: each with its title (eko/store/rooms.py: room_title)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from eko.api.schemas.rooms import RoomOut
from eko.store import rooms as room_repo
from eko.store.models import Room


async def with_titles(
    session: AsyncSession, rooms: Sequence[Room], assistant_name: str
) -> list[RoomOut]:
    """A default-named room (created without a name: "<user> & <assistant>") is titled by its
    first user message."""
    suffix = f" & {assistant_name}"
    untitled = [r.id for r in rooms if r.kind == "direct" and r.name.endswith(suffix)]
    firsts = await room_repo.first_user_messages(session, room_ids=untitled)
    return [
        RoomOut.of(
            room,
            title=room_repo.room_title(
                room.name, firsts.get(room.id), default_name=room.id in firsts
            ),
        )
        for room in rooms
    ]
