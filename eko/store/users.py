"""User repository: keyword-only functions over an AsyncSession."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.models import User

API_KEY_PREFIX = "eko_"


def new_api_key() -> str:
    return API_KEY_PREFIX + secrets.token_urlsafe(32)


def hash_api_key(api_key: str) -> str:
    # Keys are 256-bit random tokens: a plain SHA-256 is enough (no password stretching needed).
    return hashlib.sha256(api_key.encode()).hexdigest()


async def create_user(
    session: AsyncSession,
    *,
    display_name: str,
    role: str = "member",
    free_quota_limit: int = 8,
    is_pro: bool = False,
    settings: dict[str, Any] | None = None,
) -> tuple[User, str]:
    """Create a user; returns it with its API key (shown once, only the hash is stored)."""
    api_key = new_api_key()
    user = User(
        display_name=display_name,
        role=role,
        api_key_hash=hash_api_key(api_key),
        is_pro=is_pro,
        free_quota_used=0,
        free_quota_limit=free_quota_limit,
        settings=settings or {},
    )
    session.add(user)
    await session.flush()
    return user, api_key


async def get_by_api_key(session: AsyncSession, *, api_key: str) -> User | None:
    result = await session.execute(select(User).where(User.api_key_hash == hash_api_key(api_key)))
    return result.scalar_one_or_none()


async def get_by_public_id(session: AsyncSession, *, public_id: str) -> User | None:
    result = await session.execute(select(User).where(User.public_id == public_id))
    return result.scalar_one_or_none()


async def get_by_name(session: AsyncSession, *, display_name: str) -> User | None:
    result = await session.execute(
        select(User).where(User.display_name == display_name).order_by(User.id).limit(1)
    )
    return result.scalar_one_or_none()


async def list_users(session: AsyncSession, *, limit: int = 1000) -> Sequence[User]:
    result = await session.execute(select(User).order_by(User.id).limit(limit))
    return result.scalars().all()


async def update_user(
    session: AsyncSession,
    *,
    user_id: int,
    display_name: str | None = None,
    language: str | None = None,
) -> User | None:
    """Change what is given; the language is kept in the user's settings."""
    user = await session.get(User, user_id)
    if user is None:
        return None
    if display_name is not None:
        user.display_name = display_name
    if language is not None:
        # A new dict: the JSON column only notices a reassignment.
        user.settings = {**(user.settings or {}), "language": language}
    await session.flush()
    return user
