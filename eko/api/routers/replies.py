"""Acting on a reply: stop it while it is written, regenerate it, read its earlier versions.

    POST /v1/rooms/{room}/messages/{id}/stop        id: the user message being answered, or
                                                    its reply; 202 when the generation stops
    POST /v1/rooms/{room}/messages/{id}/regenerate  id: the reply (or its user message); the
                                                    new version, as JSON or Server-Sent Events
    GET  /v1/rooms/{room}/messages/{id}/versions    the versions a reply replaced, oldest first

Only the person who sent the message (or staff) may stop or regenerate its reply. With several
API processes (PostgreSQL event bus) a stop reaches the process writing the reply over the bus.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import structlog
from fastapi import APIRouter, Query, Request, status
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from eko.api.deps import ChatDep, CurrentUser, DatabaseDep, ServicesDep, room_for_user
from eko.api.problems import Problem, problem_responses
from eko.api.schemas.rooms import MessageOut
from eko.api.sse_reply import sse_doc, stream_reply, wants_stream
from eko.chat.answering import reply_dedupe_key
from eko.chat.pipeline import Turn
from eko.chat.service import Exchange
from eko.chat.streaming import LiveReply
from eko.store import message_versions as version_repo
from eko.store import messages as message_repo
from eko.store.db import Database
from eko.store.models import Message, Room, User
from eko.wiring import Services

log = structlog.get_logger("eko.api")
router = APIRouter(prefix="/v1/rooms", tags=["rooms"])


class StopOut(BaseModel):
    # True: stopped by this process; relayed: sent to the API process writing the reply.
    stopped: bool
    relayed: bool = False
    reply_to_id: str


class VersionOut(BaseModel):
    version: int
    type: str
    content: str
    metadata: dict[str, Any]
    written_at: datetime
    replaced_at: datetime


class VersionsOut(BaseModel):
    message_id: str
    current: MessageOut
    previous: list[VersionOut]


@router.post(
    "/{room_id}/messages/{message_id}/stop",
    status_code=status.HTTP_202_ACCEPTED,
    responses=problem_responses(403, 404, 409),
)
async def stop_reply(
    room_id: str, message_id: str, user: CurrentUser, database: DatabaseDep, chat: ChatDep
) -> StopOut:
    """Stop the reply being written: what was produced is stored, marked stopped.

    `relayed`: the reply is written by another API process (PostgreSQL event bus); the stop
    was sent to it."""
    room, user_message = await _user_message(database, room_id, message_id, user)
    live = chat.live.get(user_message.id)
    if live is not None:
        if not live.stop():
            raise _not_in_progress()
        log.info("chat.reply.stop", message_id=user_message.id)
        return StopOut(stopped=True, reply_to_id=user_message.id)
    async with database.session() as session:
        stored = await message_repo.get_by_dedupe_key(
            session, dedupe_key=reply_dedupe_key(user_message.id)
        )
    if stored is not None or not chat.live.shared:
        raise _not_in_progress()
    await chat.live.relay_stop(room.id, user_message.id)
    log.info("chat.reply.stop_relayed", message_id=user_message.id)
    return StopOut(stopped=False, relayed=True, reply_to_id=user_message.id)


@router.post(
    "/{room_id}/messages/{message_id}/regenerate",
    response_model=MessageOut,
    responses={**problem_responses(403, 404, 409), **sse_doc(200)},
)
async def regenerate_reply(
    room_id: str,
    message_id: str,
    request: Request,
    user: CurrentUser,
    database: DatabaseDep,
    chat: ChatDep,
    services: ServicesDep,
    stream: Annotated[bool, Query(description="true: the new version as Server-Sent Events")] = (
        False
    ),
) -> MessageOut | StreamingResponse:
    """A new version of the reply (the earlier ones are kept: GET …/versions)."""
    room, user_message = await _user_message(database, room_id, message_id, user)
    async with database.session() as session:
        reply = await message_repo.get_by_dedupe_key(
            session, dedupe_key=reply_dedupe_key(user_message.id)
        )
    if reply is None:
        raise Problem(
            409, "no-reply-yet", "No reply yet", "This message has no stored reply to regenerate."
        )
    await _forget_in_guard(services, reply, user)
    turn = Turn(user=user, room=room, user_message=user_message)
    if wants_stream(request, stream):

        async def start(live: LiveReply) -> Exchange:
            updated = await chat.regenerate(turn, reply, live=live)
            return Exchange(user_message, updated, created=False)

        return await stream_reply(
            start=start,
            publish=services.events.publish,
            user=user,
            room_id=room.id,
            status_code=200,
        )
    updated = await chat.regenerate(turn, reply)
    return MessageOut.of(updated)


@router.get("/{room_id}/messages/{message_id}/versions", responses=problem_responses(404))
async def list_versions(
    room_id: str, message_id: str, user: CurrentUser, database: DatabaseDep
) -> VersionsOut:
    async with database.session() as session:
        await room_for_user(session, room_id=room_id, user=user)
        reply = await message_repo.get_message(session, message_id=message_id)
        if reply is None or reply.room_id != room_id:
            raise _not_found(message_id)
        versions = await version_repo.list_versions(session, message_id=reply.id)
    return VersionsOut(
        message_id=reply.id,
        current=MessageOut.of(reply),
        previous=[
            VersionOut(
                version=v.version,
                type=v.type,
                content=v.content,
                metadata=v.meta or {},
                written_at=v.written_at,
                replaced_at=v.replaced_at,
            )
            for v in versions
        ],
    )


async def _user_message(
    database: Database, room_id: str, message_id: str, user: User
) -> tuple[Room, Message]:
    """The user message of an exchange, from its id or its reply's; the caller must own it."""
    async with database.session() as session:
        room = await room_for_user(session, room_id=room_id, user=user)
        message = await message_repo.get_message(session, message_id=message_id)
        if message is not None and message.role == "assistant" and message.reply_to_id:
            message = await message_repo.get_message(session, message_id=message.reply_to_id)
    if message is None or message.room_id != room.id or message.role != "user":
        raise _not_found(message_id)
    if message.sender_id != user.id and user.role != "staff":
        raise Problem(
            403, "not-your-message", "Not your message", "Only its sender acts on this reply."
        )
    return room, message


async def _forget_in_guard(services: Services, reply: Message, user: User) -> None:
    """A rejected reply must not be served from the memory guard again."""
    try:
        await services.conversation_guard.forget_reply(reply.id, by=user.public_id)
    except Exception:  # the regeneration matters more than the cache's bookkeeping
        log.warning("chat.regenerate.guard_update_failed", reply_id=reply.id, exc_info=True)


def _not_in_progress() -> Problem:
    return Problem(
        409,
        "reply-not-in-progress",
        "No reply in progress",
        "This message's reply is not being written (it is stored already, or was stopped); "
        "nothing to stop.",
    )


def _not_found(message_id: str) -> Problem:
    return Problem(404, "message-not-found", "Message not found", f"No message {message_id!r}.")
