"""Conversations of OpenAI clients: each room's conversation so far, as a fingerprint.

Stateless clients (the `openai` SDK, LangChain, `llm`, ...) send the whole conversation with
each request. After each exchange the room's head becomes the fingerprint of its conversation
so far (the turns up to and including the reply), so that the next request, whose earlier
turns are those same turns, finds the room (eko/api/openai_conversation.py).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from eko.store.models import Base, BigId, utcnow


class OpenAIConversation(Base):
    __tablename__ = "openai_conversations"
    __table_args__ = (
        # A request's lookup: one key's rooms with one persona whose head is these turns.
        Index("ix_openai_conversations_head", "user_id", "persona", "fingerprint"),
        # A retried request (same Idempotency-Key, same earlier turns): the room it went to.
        Index("ix_openai_conversations_last_request", "user_id", "persona", "last_request"),
    )

    room_id: Mapped[str] = mapped_column(
        ForeignKey("rooms.id", ondelete="CASCADE"), primary_key=True
    )
    # Two keys never share a room this way.
    user_id: Mapped[int] = mapped_column(BigId, ForeignKey("users.id", ondelete="CASCADE"))
    persona: Mapped[str] = mapped_column(String(100))
    # sha256 (hex) of the room's conversation so far; a random value while an exchange is
    # being answered (the room is claimed: a parallel request of the same turns forks).
    fingerprint: Mapped[str] = mapped_column(String(64))
    # sha256 of the last request's Idempotency-Key and earlier turns (None without a key).
    last_request: Mapped[str | None] = mapped_column(String(64), nullable=True, default=None)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
