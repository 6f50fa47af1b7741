"""Rooms and their messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request, status
from fastapi.responses import StreamingResponse
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.api.deps import (
    ChatDep,
    CurrentUser,
    DatabaseDep,
    PromptsDep,
    ServicesDep,
    SessionDep,
    SettingsDep,
    room_for_user,
)
from eko.api.message_problems import content_problem
from eko.api.problems import Problem, problem_responses
from eko.api.room_titles import with_titles
from eko.api.schemas.inputs import MAX_QUERY_INT
from eko.api.schemas.rooms import (
    ExchangeOut,
    ImportedMessage,
    ImportOut,
    LLMCallOut,
    MessageCreate,
    MessageOut,
    MessagePage,
    MessagesImport,
    RoomCreate,
    RoomOut,
    RoomUpdate,
)
from eko.api.sse_reply import sse_doc, stream_reply, wants_stream
from eko.chat.history_import import ImportConflict, ImportInvalid, ImportTurn
from eko.chat.service import EmptyMessage, IdempotencyConflict, MessageTooLong
from eko.memory.forget_room import forget_room
from eko.store import llm_calls as call_repo
from eko.store import messages as message_repo
from eko.store import rooms as room_repo
from eko.store.models import Message, User

router = APIRouter(prefix="/v1/rooms", tags=["rooms"])

# The import route's path ends so (the body limit middleware gives it a larger body).
IMPORT_PATH_SUFFIX = "/messages:import"


@router.post("", status_code=status.HTTP_201_CREATED)
async def create_room(
    body: RoomCreate,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    prompts: PromptsDep,
) -> RoomOut:
    persona = body.persona or settings.default_persona
    if not prompts.has_persona(persona):
        raise Problem(
            422,
            "unknown-persona",
            "Unknown persona",
            f"No persona {persona!r}; available: {', '.join(prompts.personas())}.",
        )
    name = body.name or await _default_name(session, body.kind, user, settings.assistant_name)
    room = await room_repo.create_room(
        session, kind=body.kind, name=name, persona=persona, created_by=user.id
    )
    return RoomOut.of(room)


@router.get("")
async def list_rooms(
    user: CurrentUser, session: SessionDep, settings: SettingsDep
) -> list[RoomOut]:
    """The user's rooms, newest first, each with its title (see RoomOut.title)."""
    rooms = await room_repo.list_rooms_for_user(session, user_id=user.id)
    return await with_titles(session, rooms, settings.assistant_name)


@router.get("/{room_id}", responses=problem_responses(404))
async def get_room(
    room_id: str, user: CurrentUser, session: SessionDep, settings: SettingsDep
) -> RoomOut:
    room = await room_for_user(session, room_id=room_id, user=user)
    return (await with_titles(session, [room], settings.assistant_name))[0]


@router.patch("/{room_id}", responses=problem_responses(404, 422))
async def update_room(
    room_id: str, body: RoomUpdate, user: CurrentUser, session: SessionDep
) -> RoomOut:
    """Rename a room and/or set its instructions (any member). The instructions reach the
    writer as an OpenAI client's system message does, and a reply written under them is never
    served or learned by the memory guard."""
    room = await room_for_user(session, room_id=room_id, user=user)
    if not body.model_fields_set:
        raise Problem(422, "empty-update", "Nothing to change", "Send a name or instructions.")
    if "name" in body.model_fields_set:
        name = (body.name or "").strip()
        if not name:
            raise Problem(422, "empty-name", "Empty name", "A room name cannot be blank.")
        room = await room_repo.rename_room(session, room=room, name=name)
    if "instructions" in body.model_fields_set:
        instructions = (body.instructions or "").strip() or None
        room = await room_repo.set_instructions(session, room=room, instructions=instructions)
    return RoomOut.of(room)


@router.delete(
    "/{room_id}", status_code=status.HTTP_204_NO_CONTENT, responses=problem_responses(403, 404)
)
async def delete_room(
    room_id: str, user: CurrentUser, session: SessionDep, services: ServicesDep
) -> None:
    """Delete a direct room with all its messages, its vectors, its memory items and its
    attachments: only the user who created it."""
    room = await room_for_user(session, room_id=room_id, user=user)
    if room.kind != "direct" or room.created_by != user.id:
        raise Problem(
            403,
            "room-not-deletable",
            "Not your room to delete",
            "Only the creator of a direct room deletes it.",
        )
    # Through the in-memory index, so its partitions forget the room too.
    await forget_room(session, vectors=services.memory_vectors, room_id=room.id)
    await services.engine.attachments.forget_room(session, room_id=room.id)
    await room_repo.delete_room(session, room_id=room.id)


@router.post(
    "/{room_id}/messages",
    status_code=status.HTTP_201_CREATED,
    response_model=ExchangeOut,
    responses={**problem_responses(404), **sse_doc(201)},
)
async def post_message(
    room_id: str,
    body: MessageCreate,
    request: Request,
    user: CurrentUser,
    database: DatabaseDep,
    chat: ChatDep,
    services: ServicesDep,
    stream: Annotated[
        bool,
        Query(description="true: the reply as Server-Sent Events (as Accept: text/event-stream)"),
    ] = False,
    respond: Annotated[
        bool,
        Query(
            description="false: only store the message; ask for the answer with "
            "POST /v1/chat/message (the seed's client flow)"
        ),
    ] = True,
    idempotency_key: Annotated[
        str | None,
        Header(
            min_length=1,
            max_length=200,
            description="Safe retries (IETF Idempotency-Key): the same key again returns the "
            "stored message and its answer; with a different content, 422. Same role as "
            "client_message_id (if both are sent they must be equal).",
        ),
    ] = None,
) -> ExchangeOut | StreamingResponse:
    """Store the user's message, then return it with the assistant's reply (null in a lobby when
    the assistant is not addressed, or with respond=false). Streamed: see eko/api/sse_reply.py."""
    if (
        idempotency_key is not None
        and body.client_message_id is not None
        and idempotency_key != body.client_message_id
    ):
        raise Problem(
            422,
            "idempotency-key-mismatch",
            "Two different idempotency keys",
            "Idempotency-Key and client_message_id differ; send one, or the same value.",
        )
    async with database.session() as session:
        room = await room_for_user(session, room_id=room_id, user=user)
    try:
        if respond and wants_stream(request, stream):
            return await stream_reply(
                start=lambda live: chat.post(
                    user=user,
                    room=room,
                    content=body.content,
                    client_message_id=idempotency_key or body.client_message_id,
                    live=live,
                ),
                publish=services.events.publish,
                user=user,
                room_id=room.id,
            )
        exchange = await chat.post(
            user=user,
            room=room,
            content=body.content,
            client_message_id=idempotency_key or body.client_message_id,
            respond=respond,
        )
    except (MessageTooLong, EmptyMessage) as exc:
        raise content_problem(exc) from exc
    except IdempotencyConflict as exc:
        raise Problem(
            422,
            "idempotency-key-reused",
            "Idempotency key reused",
            "This key was already used for a message with a different content; nothing new "
            "was stored.",
        ) from exc
    reply = exchange.assistant_message
    return ExchangeOut(
        user_message=MessageOut.of(exchange.user_message, sender_public_id=user.public_id),
        assistant_message=MessageOut.of(reply) if reply is not None else None,
        created=exchange.created,
        answer_pending=exchange.answer_pending,
    )


@router.post(
    "/{room_id}" + IMPORT_PATH_SUFFIX,
    status_code=status.HTTP_201_CREATED,
    responses=problem_responses(404, 409, 413, 422),
)
async def import_messages(
    room_id: str, body: MessagesImport, user: CurrentUser, services: ServicesDep
) -> ImportOut:
    """Store a conversation's history in one call: its turns in order, with their speakers and
    dates, all or none (a wrong turn: 422 with every error, nothing stored). Not counted
    against the free quota, not answered. Idempotent per message (client_message_id, or the
    turn's position and content). The turns are found by their words at once, and by their
    meaning once a job has embedded them (memory.indexing / memory.indexed events)."""
    async with services.database.session() as session:
        room = await room_for_user(session, room_id=room_id, user=user)
    try:
        result = await services.history_import.store(
            user=user, room=room, turns=[_import_turn(m) for m in body.messages]
        )
    except ImportInvalid as exc:
        raise Problem(
            422,
            "invalid-import",
            "Invalid messages; nothing was stored",
            str(exc),
            errors=[
                {"loc": ["body", "messages", e.index, e.field], "msg": e.message, "type": "import"}
                for e in exc.errors
            ],
        ) from exc
    except ImportConflict as exc:
        raise Problem(
            409,
            "import-conflict",
            "Client ids reused for different messages; nothing was stored",
            str(exc),
            indexes=exc.indexes,
        ) from exc
    messages = result.messages
    return ImportOut(
        imported=result.created,
        already_imported=len(messages) - result.created,
        first_seq=min(m.seq for m in messages),
        last_seq=max(m.seq for m in messages),
        index_job_id=result.index_job_id,
    )


def _import_turn(message: ImportedMessage) -> ImportTurn:
    return ImportTurn(
        role=message.role,
        content=message.content,
        created_at=message.created_at,
        name=message.name,
        client_id=message.client_message_id,
    )


@router.get("/{room_id}/messages", responses=problem_responses(404))
async def list_messages(
    room_id: str,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    before: Annotated[
        int | None,
        Query(ge=1, le=MAX_QUERY_INT, description="page of messages with seq < before"),
    ] = None,
    after: Annotated[
        int | None,
        Query(ge=0, le=MAX_QUERY_INT, description="page of messages with seq > after"),
    ] = None,
) -> MessagePage:
    room = await room_for_user(session, room_id=room_id, user=user)
    if before is not None and after is not None:
        raise Problem(422, "bad-cursor", "Bad cursor", "Use either before or after, not both.")
    limit = min(limit, settings.page_size_max)
    page = await message_repo.list_messages(
        session, room_id=room.id, limit=limit, before_seq=before, after_seq=after
    )
    senders = await _public_ids(session, page)
    items = [
        MessageOut.of(m, sender_public_id=senders.get(m.sender_id) if m.sender_id else None)
        for m in page
    ]
    next_before = page[0].seq if page and page[0].seq > 1 and after is None else None
    return MessagePage(items=items, next_before=next_before)


@router.get("/{room_id}/llm-calls", responses=problem_responses(404))
async def list_llm_calls(
    room_id: str,
    user: CurrentUser,
    session: SessionDep,
    message_id: str | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[LLMCallOut]:
    """Every model call made for this room (or for one message of it): provider, outcome, tokens."""
    room = await room_for_user(session, room_id=room_id, user=user)
    calls = await call_repo.list_calls(session, room_id=room.id, message_id=message_id, limit=limit)
    return [LLMCallOut.model_validate(c, from_attributes=True) for c in calls]


async def _default_name(session: AsyncSession, kind: str, user: User, assistant_name: str) -> str:
    """ "<user> & <assistant>" for a direct room (titled by its first message later, see
    with_titles); a lobby's is numbered, "<user> & <assistant> #2", so two lobbies created
    without a name are told apart in the list (#37)."""
    name = f"{user.display_name} & {assistant_name}"
    if kind != "lobby":
        return name
    number = await room_repo.count_created(session, user_id=user.id, kind="lobby") + 1
    return f"{name} #{number}"


async def _public_ids(session: AsyncSession, page: Sequence[Message]) -> dict[int, str]:
    ids = {m.sender_id for m in page if m.sender_id is not None}
    if not ids:
        return {}
    rows = await session.execute(select(User.id, User.public_id).where(User.id.in_(ids)))
    return {row[0]: row[1] for row in rows}
