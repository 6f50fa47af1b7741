"""API keys of a user: create (the key is shown once), list, revoke."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.account_models import ApiKey
from eko.store.models import User
from eko.store.users import hash_api_key, new_api_key, new_key_row


async def create_key(session: AsyncSession, *, user_id: int, name: str) -> tuple[ApiKey, str]:
    row, api_key = new_key_row(user_id, name=name)
    session.add(row)
    await session.flush()
    return row, api_key


async def list_keys(session: AsyncSession, *, user_id: int) -> Sequence[ApiKey]:
    """Every key of the user, revoked ones included, newest first."""
    result = await session.execute(
        select(ApiKey).where(ApiKey.user_id == user_id).order_by(ApiKey.id.desc())
    )
    return result.scalars().all()


async def revoke_key(session: AsyncSession, *, user_id: int, key_id: str) -> ApiKey | None:
    """Revoke the user's key `key_id` (its public id); None if the user has no such key. The
    user's event-token secret is renewed, so tokens issued before stop working too."""
    result = await session.execute(
        select(ApiKey).where(ApiKey.user_id == user_id, ApiKey.public_id == key_id)
    )
    row = result.scalar_one_or_none()
    if row is None:
        return None
    if row.revoked_at is None:
        row.revoked_at = datetime.now(UTC)
        user = await session.get(User, user_id)
        if user is not None:
            user.api_key_hash = hash_api_key(new_api_key())
        await session.flush()
    return row
