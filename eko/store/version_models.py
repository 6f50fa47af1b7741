"""Earlier versions of an assistant reply (POST …/messages/{id}/regenerate) or of an edited
user message (POST …/messages/{id}/edit, eko/store/message_edits.py).

The reply itself keeps its id and place in the room and holds the latest version, so every
reader (the room's list, the context loader, summaries) sees only that one; each version it
replaced is kept here, numbered from 1.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from eko.store.models import Base, BigId, utcnow


class MessageVersion(Base):
    __tablename__ = "message_versions"
    __table_args__ = (UniqueConstraint("message_id", "version", name="uq_message_versions"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    message_id: Mapped[str] = mapped_column(ForeignKey("messages.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(32))
    content: Mapped[str] = mapped_column(Text)
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    # When this version was written (the reply's own time for version 1).
    written_at: Mapped[datetime] = mapped_column()
    # When it was replaced by the next one.
    replaced_at: Mapped[datetime] = mapped_column(default=utcnow)
