"""The page's signed-in sessions: a random cookie token (stored hashed), a CSRF token, an
expiry; signing out revokes the row."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.account_models import WebSession
from eko.store.models import User
from eko.store.users import hash_api_key


def new_token() -> str:
    return secrets.token_urlsafe(32)


async def open_session(
    session: AsyncSession, *, user_id: int, ttl: timedelta, now: datetime | None = None
) -> tuple[str, WebSession]:
    """A new session for `user_id`: the cookie's token (returned once) and the row."""
    now = now or datetime.now(UTC)
    token = new_token()
    row = WebSession(
        token_hash=hash_api_key(token),
        user_id=user_id,
        csrf_token=new_token(),
        created_at=now,
        expires_at=now + ttl,
    )
    session.add(row)
    await session.flush()
    return token, row


async def find_session(
    session: AsyncSession, *, token: str, now: datetime | None = None
) -> tuple[WebSession, User] | None:
    """The live session of `token` and its user: not revoked, not expired."""
    now = now or datetime.now(UTC)
    result = await session.execute(
        select(WebSession, User)
        .join(User, User.id == WebSession.user_id)
        .where(
            WebSession.token_hash == hash_api_key(token),
            WebSession.revoked_at.is_(None),
            WebSession.expires_at > now,
        )
    )
    row = result.first()
    return (row[0], row[1]) if row is not None else None


async def revoke_session(session: AsyncSession, *, token: str) -> bool:
    result = await session.execute(
        update(WebSession)
        .where(WebSession.token_hash == hash_api_key(token), WebSession.revoked_at.is_(None))
        .values(revoked_at=datetime.now(UTC))
    )
    return bool(getattr(result, "rowcount", 0))


async def prune_sessions(session: AsyncSession, *, before: datetime) -> None:
    """Forget sessions that ended (expired or revoked) before `before`."""
    await session.execute(
        delete(WebSession).where(
            (WebSession.expires_at < before) | (WebSession.revoked_at < before)
        )
    )


async def revoke_user_sessions(session: AsyncSession, *, user_id: int) -> None:
    """Sign a user out everywhere (a new password)."""
    await session.execute(
        update(WebSession)
        .where(WebSession.user_id == user_id, WebSession.revoked_at.is_(None))
        .values(revoked_at=datetime.now(UTC))
    )
