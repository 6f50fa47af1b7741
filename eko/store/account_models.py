"""Accounts' tables (migration 0014): API keys, the page's sessions, invitations, and failed
sign-ins (the rate limit's memory). Every secret is stored as its SHA-256 only."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from eko.store.models import Base, BigId, new_id, utcnow


class ApiKey(Base):
    """A program's key: `Authorization: Bearer <key>`. Revoked keys stay listed (when)."""

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    public_id: Mapped[str] = mapped_column(String(32), unique=True, default=new_id)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # The key's first characters, to tell keys apart in a list ("eko_AbC1…").
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(nullable=True, default=None)


class WebSession(Base):
    """A signed-in browser: the cookie's token (hashed), its CSRF token, until when."""

    __tablename__ = "web_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    # Sent back by the page in X-CSRF-Token on every write made with the cookie.
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(index=True)
    revoked_at: Mapped[datetime | None] = mapped_column(nullable=True, default=None)


class Invitation(Base):
    """A one-time link made by staff: whoever opens it before it expires picks a name and a
    password, once."""

    __tablename__ = "invitations"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    public_id: Mapped[str] = mapped_column(String(32), unique=True, default=new_id)
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    role: Mapped[str] = mapped_column(String(16), default="member")
    is_pro: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()
    used_at: Mapped[datetime | None] = mapped_column(nullable=True, default=None)
    used_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )


class SigninFailure(Base):
    """One refused sign-in: counted per name and per client address over a window."""

    __tablename__ = "signin_failures"
    __table_args__ = (
        Index("ix_signin_failures_name", "login_name", "at"),
        Index("ix_signin_failures_address", "address", "at"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    login_name: Mapped[str] = mapped_column(String(100))
    address: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime] = mapped_column(default=utcnow)
