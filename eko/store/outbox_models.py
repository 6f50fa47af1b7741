"""The answer outbox: one row per stored user message that the assistant still owes an answer.

The row is written in the user message's own transaction and deleted in the reply's, so "stored"
and "owed an answer" can never disagree, whatever crashes in between. A process answering a row
holds a lease on it (`claimed_by`, `claimed_until`) and renews it while it works; a row whose
lease ran out (its process died, or gave up on a transient failure) is claimed again by any
process's recovery loop (eko/chat/recovery.py).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from eko.store.models import Base, utcnow


class AnswerOutbox(Base):
    __tablename__ = "answer_outbox"
    __table_args__ = (
        # The recovery loop's claim: rows whose lease ran out, oldest first.
        Index("ix_answer_outbox_claimed_until", "claimed_until"),
    )

    user_message_id: Mapped[str] = mapped_column(
        ForeignKey("messages.id", ondelete="CASCADE"), primary_key=True
    )
    room_id: Mapped[str] = mapped_column(String(32))
    # The process answering it now ("<host>:<pid>:<random>"), None when nobody is.
    claimed_by: Mapped[str | None] = mapped_column(String(100), nullable=True)
    # Until when the claim holds; a row past it is claimable again.
    claimed_until: Mapped[datetime] = mapped_column(default=utcnow)
    # Claims made so far (the first is the request's own).
    attempts: Mapped[int] = mapped_column(Integer, default=1)
    # Why the last attempt gave up (an exception's type and message, clipped).
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
