"""The seed's chat entry point and quota endpoint.

POST /v1/chat/message {conversation_id, user_message_id}: the client stored the user message
first (POST /v1/rooms/{id}/messages?respond=false), then asks for the answer; the backend
writes the assistant message (once, whatever the number of calls) and returns it.
GET /v1/quota/{public_user_id}: the quota state, read-only.
"""

from __future__ import annotations

from fastapi import APIRouter

from eko.api.deps import ChatDep, CurrentUser, DatabaseDep, SessionDep, room_for_user
from eko.api.problems import Problem, problem_responses
from eko.api.schemas.chat import ChatMessageIn, ChatMessageOut, QuotaOut
from eko.api.schemas.rooms import MessageOut
from eko.chat.engine.quota import QuotaStatus
from eko.chat.pipeline import Turn
from eko.store import messages as message_repo
from eko.store import users as user_repo
from eko.store.models import User

router = APIRouter(prefix="/v1", tags=["chat"])


@router.post("/chat/message", responses=problem_responses(403, 404, 503))
async def chat_message(
    body: ChatMessageIn, user: CurrentUser, database: DatabaseDep, chat: ChatDep
) -> ChatMessageOut:
    """Answer a stored user message (idempotent: the same message gets the same answer)."""
    async with database.session() as session:
        room = await room_for_user(session, room_id=body.conversation_id, user=user)
        message = await message_repo.get_message(session, message_id=body.user_message_id)
        if message is None or message.room_id != room.id:
            raise Problem(
                404,
                "message-not-found",
                "Message not found",
                f"No message {body.user_message_id!r} in conversation {room.id!r}.",
            )
        if message.role != "user":
            raise Problem(
                422,
                "not-a-user-message",
                "Not a user message",
                "Only a user's message can be answered.",
            )
        if message.sender_id != user.id and user.role != "staff":
            raise Problem(
                403,
                "not-your-message",
                "Not your message",
                "Only the sender (or staff) asks for the answer to a message.",
            )
        if message.sender_id == user.id:
            sender: User | None = user
        elif message.sender_id is not None:
            sender = await session.get(User, message.sender_id)
        else:
            sender = None
    if sender is None:
        raise Problem(422, "sender-gone", "Sender gone", "The message's sender no longer exists.")
    if not chat.should_answer(room, message.content):
        return ChatMessageOut(
            conversation_id=room.id,
            user_message_id=message.id,
            assistant_message_id=None,
            assistant_message=None,
        )
    reply = await chat.answer(Turn(user=sender, room=room, user_message=message))
    if reply is None:
        # The database failed while answering: this call stored nothing; the same call again
        # answers (and never twice).
        raise Problem(
            503,
            "database-busy",
            "Database busy",
            "The answer could not be written right now; this call stored nothing. Retry shortly.",
            headers={"Retry-After": "2"},
        )
    return ChatMessageOut(
        conversation_id=room.id,
        user_message_id=message.id,
        assistant_message_id=reply.id,
        assistant_message=MessageOut.of(reply),
    )


@router.get("/quota/{public_user_id}", responses=problem_responses(404))
async def quota(public_user_id: str, user: CurrentUser, session: SessionDep) -> QuotaOut:
    """A user's quota state: their own, or anyone's for staff."""
    if user.public_id != public_user_id and user.role != "staff":
        raise Problem(404, "user-not-found", "User not found", f"No user {public_user_id!r}.")
    target = await user_repo.get_by_public_id(session, public_id=public_user_id)
    if target is None:
        raise Problem(404, "user-not-found", "User not found", f"No user {public_user_id!r}.")
    return QuotaOut.of(QuotaStatus.of(target))
