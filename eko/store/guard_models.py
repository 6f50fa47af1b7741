"""The memory guard's table: validated question/answer pairs (the seed's `responses` table).

The question's vector lives in the shared `embeddings` table (collection "guard", item_id = the
entry id, key = the entry's scope), so the vector index filters by scope during the search.
Only active entries keep a vector: marking an entry obsolete removes it from the index, so an
obsolete entry can never take a candidate slot from an active one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from eko.store.models import Base, new_id, utcnow

GUARD_STATUSES = ("active", "obsolete")


class GuardEntry(Base):
    __tablename__ = "guard_entries"
    __table_args__ = (
        # Exact-match lookup: (scope, SHA-256 of scope + normalized question).
        Index("ix_guard_entries_scope_key_hash", "scope", "key_hash"),
        # Expiry (prune) and "most recent first" listings.
        Index("ix_guard_entries_created_at", "created_at"),
        # One entry per validated assistant message: validating twice is a no-op.
        UniqueConstraint("source_message_id", name="uq_guard_entries_source_message"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    # Who may be served this entry, e.g. "persona:eko" or "persona:eko|user:<public id>".
    scope: Mapped[str] = mapped_column(String(200))
    key_hash: Mapped[str] = mapped_column(String(64))
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text)
    # phase, project, authors, initial_score, tags, validated_by, source, feedback ...
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    status: Mapped[str] = mapped_column(String(16), default="active")  # active | obsolete
    usage_count: Mapped[int] = mapped_column(Integer, default=0)
    source_message_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(nullable=True)
    obsoleted_at: Mapped[datetime | None] = mapped_column(nullable=True)
