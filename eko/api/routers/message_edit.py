"""Edit and resend the last message of a conversation.

    POST /v1/rooms/{room}/messages/{id}/edit  {content}   id: the person's own user message;
        stores the text as its new version and writes its reply again: {user_message,
        assistant_message, created: false}, or Server-Sent Events with ?stream=true

The earlier versions of both (the message and its reply) are kept: GET …/messages/{id}/versions.
The edit counts against the free quota like a new message (a blocked person gets the paywall
answer). Only the room's last exchange can be edited (409 otherwise); someone else's message is
403, a message of another room 404.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from eko.api.deps import ChatDep, CurrentUser, DatabaseDep, ServicesDep, room_for_user
from eko.api.message_problems import content_problem
from eko.api.problems import Problem, problem_responses
from eko.api.schemas.rooms import ExchangeOut, MessageOut
from eko.api.sse_reply import sse_doc, stream_reply, wants_stream
from eko.chat.editing import NoReplyYet, edit_and_resend
from eko.chat.pipeline import Turn
from eko.chat.service import EmptyMessage, Exchange, MessageTooLong
from eko.chat.streaming import LiveReply
from eko.store import messages as message_repo
from eko.store.message_edits import NotEditable

router = APIRouter(prefix="/v1/rooms", tags=["rooms"])


class EditIn(BaseModel):
    content: str = Field(description="the message's new text")


@router.post(
    "/{room_id}/messages/{message_id}/edit",
    response_model=ExchangeOut,
    responses={**problem_responses(403, 404, 409, 413, 422), **sse_doc(200)},
)
async def edit_message(
    room_id: str,
    message_id: str,
    body: EditIn,
    request: Request,
    user: CurrentUser,
    database: DatabaseDep,
    chat: ChatDep,
    services: ServicesDep,
    stream: Annotated[bool, Query(description="true: the new reply as Server-Sent Events")] = (
        False
    ),
) -> ExchangeOut | StreamingResponse:
    """The message's new version and a new reply to it (both old versions kept)."""
    async with database.session() as session:
        room = await room_for_user(session, room_id=room_id, user=user)
        message = await message_repo.get_message(session, message_id=message_id)
    if message is None or message.room_id != room.id or message.role != "user":
        raise Problem(404, "message-not-found", "Message not found", f"No message {message_id!r}.")
    if message.sender_id != user.id:
        raise Problem(403, "not-your-message", "Not your message", "Only its sender edits it.")
    turn = Turn(user=user, room=room, user_message=message)
    try:
        if wants_stream(request, stream):

            async def start(live: LiveReply) -> Exchange:
                return await edit_and_resend(chat, database, turn, body.content, live=live)

            return await stream_reply(
                start=start,
                publish=services.events.publish,
                user=user,
                room_id=room.id,
                status_code=200,
            )
        exchange = await edit_and_resend(chat, database, turn, body.content)
    except (MessageTooLong, EmptyMessage) as exc:
        raise content_problem(exc) from exc
    except NotEditable as exc:
        raise Problem(
            409,
            "not-last-message",
            "Not the last message",
            "Only the conversation's last message can be edited.",
        ) from exc
    except NoReplyYet as exc:
        raise Problem(
            409,
            "no-reply-yet",
            "No reply yet",
            "This message's reply is not stored yet (still being written, or never asked for).",
        ) from exc
    assert exchange.assistant_message is not None
    return ExchangeOut(
        user_message=MessageOut.of(exchange.user_message, sender_public_id=user.public_id),
        assistant_message=MessageOut.of(exchange.assistant_message),
        created=False,
    )
