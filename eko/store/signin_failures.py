"""Refused sign-ins, counted per name and per client address over a sliding window."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.account_models import SigninFailure


async def record_failure(
    session: AsyncSession, *, login_name: str, address: str, at: datetime
) -> None:
    session.add(SigninFailure(login_name=login_name[:100], address=address[:64], at=at))
    await session.flush()


async def failures_since(
    session: AsyncSession,
    *,
    since: datetime,
    login_name: str | None = None,
    address: str | None = None,
) -> int:
    query = select(func.count()).select_from(SigninFailure).where(SigninFailure.at > since)
    if login_name is not None:
        query = query.where(SigninFailure.login_name == login_name[:100])
    if address is not None:
        query = query.where(SigninFailure.address == address[:64])
    return int((await session.execute(query)).scalar_one())


async def forget_name(session: AsyncSession, *, login_name: str) -> None:
    await session.execute(delete(SigninFailure).where(SigninFailure.login_name == login_name[:100]))


async def prune(session: AsyncSession, *, before: datetime) -> None:
    await session.execute(delete(SigninFailure).where(SigninFailure.at < before))
