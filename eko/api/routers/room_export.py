"""Export a conversation: GET /v1/rooms/{id}/export?format=md|json (members only)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from fastapi.responses import Response

from eko.api.deps import CurrentUser, SessionDep, SettingsDep
from eko.api.problems import Problem, problem_responses
from eko.api.room_export import as_json, as_markdown, file_name, room_turns
from eko.api.room_titles import with_titles
from eko.store import rooms as room_repo
from eko.store.models import utcnow

router = APIRouter(prefix="/v1/rooms", tags=["rooms"])

MEDIA_TYPES = {"md": "text/markdown; charset=utf-8", "json": "application/json"}


@router.get(
    "/{room_id}/export",
    responses={
        **problem_responses(404, 422),
        200: {"content": {"text/markdown": {}, "application/json": {}}},
    },
)
async def export_room(
    room_id: str,
    user: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
    format: Annotated[Literal["md", "json"], Query()] = "md",
) -> Response:
    """The room's messages as a file to download (Markdown, or JSON with the room and every
    message: seq, role, speaker, content, time). Only the room's members export it."""
    room = await room_repo.get_room(session, room_id=room_id)
    if room is None or not await room_repo.is_member(session, room_id=room.id, user_id=user.id):
        raise Problem(
            404, "room-not-found", "Room not found", f"No room {room_id!r} for this user."
        )
    shown = (await with_titles(session, [room], settings.assistant_name))[0]
    turns = await room_turns(session, room_id=room.id, assistant_name=settings.assistant_name)
    now = utcnow()
    text = as_markdown(shown, turns, now=now) if format == "md" else as_json(shown, turns, now=now)
    return Response(
        content=text,
        media_type=MEDIA_TYPES[format],
        headers={"Content-Disposition": f'attachment; filename="{file_name(shown, format)}"'},
    )
