"""Files attached to a room (text, Markdown, PDF): each becomes a document of the room's own
docs scope, which the chat engine searches on the room's turns (eko/chat/docs/attachments.py).
Members only; another user's room is not found, as on every room route."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, File, UploadFile, status
from pydantic import BaseModel

from eko.api.deps import CurrentUser, DatabaseDep, ServicesDep, SessionDep, room_for_user
from eko.api.problems import Problem, problem_responses
from eko.chat.docs.attachments import TooLarge
from eko.chat.docs.extract import Unreadable, Unsupported
from eko.embed.base import EmbeddingError
from eko.store.chat_models import RoomAttachment

router = APIRouter(prefix="/v1/rooms", tags=["rooms"])

# The route's path ends so (the body limit middleware gives it the attachment's limit).
ATTACHMENTS_PATH_SUFFIX = "/attachments"
# What a multipart body adds around the file (boundaries, part headers).
MULTIPART_OVERHEAD_BYTES = 64 * 1024


class AttachmentOut(BaseModel):
    id: str
    filename: str
    content_type: str
    size_bytes: int
    # Characters of text read from the file, and the chunks they made in the room's scope.
    chars: int
    chunks: int
    created_at: datetime

    @classmethod
    def of(cls, row: RoomAttachment) -> AttachmentOut:
        return cls.model_validate(row, from_attributes=True)


@router.post(
    "/{room_id}/attachments",
    status_code=status.HTTP_201_CREATED,
    responses=problem_responses(404, 415),
)
async def attach(
    room_id: str,
    file: Annotated[UploadFile, File(description="A .txt, .md or .pdf file.")],
    user: CurrentUser,
    database: DatabaseDep,
    services: ServicesDep,
) -> AttachmentOut:
    """Attach a file (multipart field `file`: text/plain, text/markdown or application/pdf, at
    most EKO_ATTACHMENT_MAX_BYTES): its text is chunked and embedded into the room's own docs
    scope, searched on every later turn of the room. A file of the same name replaces the
    earlier one. Nothing is stored on an error: 415 (another type), 413 (too big, or too much
    text), 422 (no text in it, a damaged or encrypted PDF, not UTF-8)."""
    # A short session: no connection is held while the file is parsed and embedded.
    async with database.session() as session:
        room = await room_for_user(session, room_id=room_id, user=user)
    attachments = services.engine.attachments
    data = await file.read(attachments.limits.max_bytes + 1)
    try:
        row = await attachments.add(
            room_id=room.id,
            filename=file.filename or "",
            content_type=file.content_type,
            data=data,
            uploaded_by=user.id,
        )
    except Unsupported as exc:
        raise Problem(415, "unsupported-attachment", "Unsupported file type", str(exc)) from exc
    except TooLarge as exc:
        raise Problem(413, "attachment-too-large", "Attachment too large", str(exc)) from exc
    except Unreadable as exc:
        raise Problem(
            422, "unreadable-attachment", "No readable text in the file", str(exc)
        ) from exc
    except EmbeddingError as exc:
        raise Problem(503, "embedder-unavailable", "Embedder unavailable", str(exc)) from exc
    finally:
        await file.close()
    return AttachmentOut.of(row)


@router.get("/{room_id}/attachments", responses=problem_responses(404))
async def list_attachments(
    room_id: str, user: CurrentUser, session: SessionDep, services: ServicesDep
) -> list[AttachmentOut]:
    """The room's attachments, oldest first."""
    room = await room_for_user(session, room_id=room_id, user=user)
    rows = await services.engine.attachments.list(room_id=room.id)
    return [AttachmentOut.of(row) for row in rows]


@router.delete(
    "/{room_id}/attachments/{attachment_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=problem_responses(404),
)
async def delete_attachment(
    room_id: str,
    attachment_id: str,
    user: CurrentUser,
    session: SessionDep,
    services: ServicesDep,
) -> None:
    """Remove an attachment: its chunks leave the room's scope (any member)."""
    room = await room_for_user(session, room_id=room_id, user=user)
    if not await services.engine.attachments.delete(room_id=room.id, attachment_id=attachment_id):
        raise Problem(
            404,
            "attachment-not-found",
            "Attachment not found",
            f"No attachment {attachment_id!r} in this room.",
        )
