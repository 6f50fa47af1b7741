"""Who is in a room: the names a shared room (a lobby) shows next to its messages; adding
someone by name, with suggestions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, status
from pydantic import BaseModel
from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.api.deps import CurrentUser, SessionDep, room_for_user
from eko.api.problems import Problem, problem_responses
from eko.api.schemas.accounts import NameSuggestion
from eko.api.schemas.rooms import MemberAdd
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.models import Room, RoomMember, User

router = APIRouter(prefix="/v1/rooms", tags=["rooms"])

SUGGESTIONS_MAX = 8


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


async def _room_to_add_to(session: AsyncSession, room_id: str, user: User) -> Room:
    room = await room_for_user(session, room_id=room_id, user=user)
    if room.kind == "direct" and user.role != "staff":
        raise Problem(403, "direct-room", "Direct room", "Only staff add members to a direct room.")
    return room


@router.get("/{room_id}/member-suggestions", responses=problem_responses(403, 404))
async def member_suggestions(
    room_id: str,
    user: CurrentUser,
    session: SessionDep,
    q: Annotated[str, Query(max_length=100)] = "",
) -> list[NameSuggestion]:
    """Users the caller may add to this room whose name contains `q` (case-insensitive; not
    already members), at most 8, by name."""
    room = await _room_to_add_to(session, room_id, user)
    members = select(RoomMember.user_id).where(RoomMember.room_id == room.id)
    query = select(User.public_id, User.display_name).where(User.id.not_in(members))
    text = q.strip().casefold()
    if text:
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = query.where(
            or_(
                func.lower(User.display_name).like(pattern, escape="\\"),
                User.login_name.like(pattern, escape="\\"),
            )
        )
    rows = await session.execute(
        query.order_by(func.lower(User.display_name), User.id).limit(SUGGESTIONS_MAX)
    )
    return [NameSuggestion(public_id=p, display_name=n) for p, n in rows]


@router.post(
    "/{room_id}/members",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=problem_responses(403, 404, 409, 422),
)
async def add_member(room_id: str, body: MemberAdd, user: CurrentUser, session: SessionDep) -> None:
    """Add someone by `public_id` or by `name` (their sign-in name, or a display name only one
    user has)."""
    if (body.public_id is None) == (body.name is None):
        raise Problem(422, "member-who", "Who to add", "Send exactly one of public_id and name.")
    room = await _room_to_add_to(session, room_id, user)
    if body.public_id is not None:
        member = await user_repo.get_by_public_id(session, public_id=body.public_id)
        wanted = body.public_id
    else:
        assert body.name is not None
        member = await _by_name(session, body.name)
        wanted = body.name
    if member is None:
        raise Problem(404, "user-not-found", "User not found", f"No user {wanted!r}.")
    await room_repo.add_member(session, room_id=room.id, user_id=member.id)


async def _by_name(session: AsyncSession, name: str) -> User | None:
    member = await user_repo.get_by_login_name(session, name=name)
    if member is not None:
        return member
    rows = (
        (
            await session.execute(
                select(User)
                .where(func.lower(User.display_name) == " ".join(name.split()).lower())
                .limit(2)
            )
        )
        .scalars()
        .all()
    )
    if len(rows) > 1:
        raise Problem(
            409,
            "ambiguous-name",
            "Several users have this name",
            "Pick one from the suggestions (they carry each user's public id).",
        )
    return rows[0] if rows else None
