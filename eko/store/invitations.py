"""Staff's one-time invitation links: a random token (stored hashed) that expires and is used
once."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.account_models import Invitation
from eko.store.users import hash_api_key


async def create_invitation(
    session: AsyncSession,
    *,
    created_by: int,
    role: str,
    is_pro: bool,
    ttl: timedelta,
) -> tuple[str, Invitation]:
    """A new invitation: its token (shown once, in the link) and the row."""
    token = secrets.token_urlsafe(32)
    now = datetime.now(UTC)
    row = Invitation(
        token_hash=hash_api_key(token),
        created_by=created_by,
        role=role,
        is_pro=is_pro,
        created_at=now,
        expires_at=now + ttl,
    )
    session.add(row)
    await session.flush()
    return token, row


async def find_open(
    session: AsyncSession, *, token: str, now: datetime | None = None
) -> Invitation | None:
    """The invitation of `token` if it is neither used nor expired."""
    now = now or datetime.now(UTC)
    result = await session.execute(
        select(Invitation).where(
            Invitation.token_hash == hash_api_key(token),
            Invitation.used_at.is_(None),
            Invitation.expires_at > now,
        )
    )
    return result.scalar_one_or_none()


async def claim(session: AsyncSession, *, token: str, now: datetime | None = None) -> bool:
    """Mark the invitation used, if it still was open: one caller wins, even concurrently
    (a conditional UPDATE; the loser sees no row)."""
    now = now or datetime.now(UTC)
    result = await session.execute(
        update(Invitation)
        .where(
            Invitation.token_hash == hash_api_key(token),
            Invitation.used_at.is_(None),
            Invitation.expires_at > now,
        )
        .values(used_at=now)
    )
    return bool(getattr(result, "rowcount", 0))


async def set_used_by(session: AsyncSession, *, token: str, user_id: int) -> None:
    await session.execute(
        update(Invitation)
        .where(Invitation.token_hash == hash_api_key(token))
        .values(used_by=user_id)
    )


async def list_open(session: AsyncSession, *, now: datetime | None = None) -> Sequence[Invitation]:
    now = now or datetime.now(UTC)
    result = await session.execute(
        select(Invitation)
        .where(Invitation.used_at.is_(None), Invitation.expires_at > now)
        .order_by(Invitation.created_at.desc())
    )
    return result.scalars().all()


async def cancel(session: AsyncSession, *, public_id: str) -> bool:
    """Close an open invitation before anyone uses it (it counts as used, by nobody)."""
    result = await session.execute(
        update(Invitation)
        .where(Invitation.public_id == public_id, Invitation.used_at.is_(None))
        .values(used_at=datetime.now(UTC))
    )
    return bool(getattr(result, "rowcount", 0))
