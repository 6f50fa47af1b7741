"""Reads and writes of OpenAI clients' conversation heads (conversation_models.py)."""

from __future__ import annotations

import uuid

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from eko.store.conversation_models import OpenAIConversation
from eko.store.db import Database
from eko.store.models import utcnow


def claim_marker() -> str:
    """A head no conversation has: the room is being answered."""
    return uuid.uuid4().hex + uuid.uuid4().hex


async def claim(
    database: Database,
    *,
    user_id: int,
    persona: str,
    fingerprint: str,
    request: str | None = None,
) -> str | None:
    """The room whose conversation so far has this fingerprint, claimed (its head set to a
    marker until `set_head`) so that two requests continuing the same turns at once do not
    both land in it; None when no room has these turns. `request`: the request's key, kept
    (see `retried`)."""
    async with database.session() as session:
        rooms = (
            (
                await session.execute(
                    select(OpenAIConversation.room_id)
                    .where(
                        OpenAIConversation.user_id == user_id,
                        OpenAIConversation.persona == persona,
                        OpenAIConversation.fingerprint == fingerprint,
                    )
                    .order_by(OpenAIConversation.updated_at)
                )
            )
            .scalars()
            .all()
        )
    for room_id in rooms:
        async with database.session() as session:
            claimed = await session.execute(
                update(OpenAIConversation)
                .where(
                    OpenAIConversation.room_id == room_id,
                    OpenAIConversation.fingerprint == fingerprint,
                )
                .values(fingerprint=claim_marker(), last_request=request, updated_at=utcnow())
                .execution_options(synchronize_session=False)
            )
        if getattr(claimed, "rowcount", 0) == 1:
            return room_id
    return None


async def retried(database: Database, *, user_id: int, persona: str, request: str) -> str | None:
    """The room the same request (its Idempotency-Key and earlier turns) went to before."""
    async with database.session() as session:
        result = await session.execute(
            select(OpenAIConversation.room_id)
            .where(
                OpenAIConversation.user_id == user_id,
                OpenAIConversation.persona == persona,
                OpenAIConversation.last_request == request,
            )
            .limit(1)
        )
        return result.scalar_one_or_none()


async def set_head(
    database: Database,
    *,
    room_id: str,
    user_id: int,
    persona: str,
    fingerprint: str,
    request: str | None = None,
) -> None:
    """The room's conversation so far is now `fingerprint` (its own transaction); a new row
    keeps `request` (an existing row keeps its own)."""
    for _attempt in range(2):
        try:
            async with database.session() as session:
                row = await session.get(OpenAIConversation, room_id)
                if row is None:
                    session.add(
                        OpenAIConversation(
                            room_id=room_id,
                            user_id=user_id,
                            persona=persona,
                            fingerprint=fingerprint,
                            last_request=request,
                        )
                    )
                else:
                    row.fingerprint, row.updated_at = fingerprint, utcnow()
            return
        except IntegrityError:
            continue  # a concurrent first write for this room: update it instead
