"""POST /v1/chat {"message", "room_id"?}: one call, one answer, for simple clients.

The message is stored and answered like any other (quota, memory guard, the writer); the
answer comes back in the seed's shape `{reply, mode, turns, chain, tools_used}`: mode
"reflexive" when the chain wrote it (eko/chain/), "simple" otherwise.
"""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy.ext.asyncio import AsyncSession

from eko.api.deps import ChatDep, CurrentUser, DatabaseDep, SettingsDep, room_for_user
from eko.api.message_problems import content_problem
from eko.api.problems import problem_responses
from eko.api.schemas.chain import ChatIn, ChatOut
from eko.chat.service import EmptyMessage, MessageTooLong
from eko.store import rooms as room_repo
from eko.store.models import Room, User

router = APIRouter(prefix="/v1", tags=["chat"])


@router.post("/chat", responses=problem_responses(404))
async def chat(
    body: ChatIn,
    user: CurrentUser,
    database: DatabaseDep,
    chat: ChatDep,
    settings: SettingsDep,
) -> ChatOut:
    """Send a message and get the answer, with the chain's stages when it was reflexive."""
    async with database.session() as session:
        if body.room_id is not None:
            room = await room_for_user(session, room_id=body.room_id, user=user)
        else:
            room = await _direct_room(session, user, persona=settings.default_persona)
    try:
        exchange = await chat.post(user=user, room=room, content=body.message, route=body.route)
    except (MessageTooLong, EmptyMessage) as exc:
        raise content_problem(exc) from exc
    return ChatOut.of(exchange.user_message, exchange.assistant_message)


async def _direct_room(session: AsyncSession, user: User, *, persona: str) -> Room:
    """The caller's latest direct room, created when they have none."""
    for room in await room_repo.list_rooms_for_user(session, user_id=user.id):
        if room.kind == "direct":
            return room
    return await room_repo.create_room(
        session, kind="direct", name=user.display_name, persona=persona, created_by=user.id
    )
