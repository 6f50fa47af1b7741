"""User repository: keyword-only functions over an AsyncSession."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.account_models import ApiKey
from eko.store.models import User

API_KEY_PREFIX = "eko_"


def new_api_key() -> str:
    return API_KEY_PREFIX + secrets.token_urlsafe(32)


def hash_api_key(api_key: str) -> str:
    # Keys are 256-bit random tokens: a plain SHA-256 is enough (no password stretching needed).
    return hashlib.sha256(api_key.encode()).hexdigest()


def login_key(name: str) -> str:
    """The name as signing in compares it: trimmed, case-folded, inner spaces collapsed."""
    return " ".join(name.split()).casefold()[:100]


def new_key_row(user_id: int, *, name: str) -> tuple[ApiKey, str]:
    """A new API key row for `user_id` and the key itself (shown once)."""
    api_key = new_api_key()
    row = ApiKey(user_id=user_id, name=name, key_hash=hash_api_key(api_key), prefix=api_key[:8])
    return row, api_key


async def create_user(
    session: AsyncSession,
    *,
    display_name: str,
    role: str = "member",
    free_quota_limit: int = 8,
    is_pro: bool = False,
    settings: dict[str, Any] | None = None,
    password_hash: str | None = None,
    with_key: bool = True,
) -> tuple[User, str]:
    """Create a user; returns it with its first API key (shown once, only the hash is stored),
    or "" with `with_key=False` (a person who signs in with a password). With a password hash,
    the display name is also the name typed at sign-in (case-folded)."""
    user = User(
        display_name=display_name,
        role=role,
        # The per-user secret of event tokens: random, never a key anyone holds.
        api_key_hash=hash_api_key(new_api_key()),
        login_name=login_key(display_name) if password_hash is not None else None,
        password_hash=password_hash,
        is_pro=is_pro,
        free_quota_used=0,
        free_quota_limit=free_quota_limit,
        settings=settings or {},
    )
    session.add(user)
    await session.flush()
    if not with_key:
        return user, ""
    row, api_key = new_key_row(user.id, name="initial")
    session.add(row)
    await session.flush()
    return user, api_key


async def get_by_api_key(session: AsyncSession, *, api_key: str) -> User | None:
    """The user of a key that exists and is not revoked."""
    result = await session.execute(
        select(User)
        .join(ApiKey, ApiKey.user_id == User.id)
        .where(ApiKey.key_hash == hash_api_key(api_key), ApiKey.revoked_at.is_(None))
    )
    return result.scalar_one_or_none()


async def get_by_login_name(session: AsyncSession, *, name: str) -> User | None:
    result = await session.execute(select(User).where(User.login_name == login_key(name)))
    return result.scalar_one_or_none()


async def count_users(session: AsyncSession) -> int:
    return int((await session.execute(select(func.count()).select_from(User))).scalar_one())


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
