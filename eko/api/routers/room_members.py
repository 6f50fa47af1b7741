"""Who is in a room: the names a shared room (a lobby) shows next to its messages."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter
from pydantic import BaseModel
from sqlalchemy import select

from eko.api.deps import CurrentUser, SessionDep, room_for_user
from eko.api.problems import problem_responses
from eko.store.models import RoomMember, User

router = APIRouter(prefix="/v1/rooms", tags=["rooms"])


class MemberOut(BaseModel):
    public_id: str
    display_name: str
    joined_at: datetime


@router.get("/{room_id}/members", responses=problem_responses(404))
async def list_members(room_id: str, user: CurrentUser, session: SessionDep) -> list[MemberOut]:
    """The room's members, by arrival (members only; another user's room is not found)."""
    room = await room_for_user(session, room_id=room_id, user=user)
    rows = await session.execute(
        select(User.public_id, User.display_name, RoomMember.joined_at)
        .join(RoomMember, RoomMember.user_id == User.id)
        .where(RoomMember.room_id == room.id)
        .order_by(RoomMember.joined_at.asc(), User.id.asc())
    )
    return [
        MemberOut(public_id=public_id, display_name=name, joined_at=joined)
        for public_id, name, joined in rows
    ]
