"""Repository of a user's chat profile: structured facts, agents (subscriptions), services."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.chat_models import UserAgent, UserFact, UserService
from eko.store.models import utcnow

VALUE_TYPES = ("string", "boolean", "number", "json")


def value_type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "json"


async def list_facts(session: AsyncSession, *, user_id: int) -> Sequence[UserFact]:
    result = await session.execute(
        select(UserFact).where(UserFact.user_id == user_id).order_by(UserFact.fact_key)
    )
    return result.scalars().all()


async def get_fact(session: AsyncSession, *, user_id: int, fact_key: str) -> UserFact | None:
    result = await session.execute(
        select(UserFact).where(UserFact.user_id == user_id, UserFact.fact_key == fact_key)
    )
    return result.scalar_one_or_none()


async def upsert_fact(
    session: AsyncSession,
    *,
    user_id: int,
    fact_key: str,
    value: Any,
    category: str = "profile",
    scope: str = "global",
    value_type: str | None = None,
    confidence: float = 1.0,
    is_estimated: bool = False,
    source_ref: str | None = None,
    notes: str | None = None,
) -> UserFact:
    """Insert or replace the user's fact of this key (unique per user + key)."""
    fact = await get_fact(session, user_id=user_id, fact_key=fact_key)
    if fact is None:
        fact = UserFact(user_id=user_id, fact_key=fact_key)
        session.add(fact)
    fact.value = value
    fact.value_type = value_type or value_type_of(value)
    fact.category = category
    fact.scope = scope
    fact.confidence = confidence
    fact.is_estimated = is_estimated
    fact.source_ref = source_ref
    fact.notes = notes
    fact.updated_at = utcnow()
    await session.flush()
    return fact


async def delete_fact(session: AsyncSession, *, user_id: int, fact_key: str) -> bool:
    result = await session.execute(
        delete(UserFact).where(UserFact.user_id == user_id, UserFact.fact_key == fact_key)
    )
    return bool(getattr(result, "rowcount", 0))


async def list_agents(session: AsyncSession, *, user_id: int) -> Sequence[UserAgent]:
    result = await session.execute(
        select(UserAgent).where(UserAgent.user_id == user_id).order_by(UserAgent.agent_type)
    )
    return result.scalars().all()


async def set_agent(
    session: AsyncSession, *, user_id: int, agent_type: str, active: bool
) -> UserAgent:
    result = await session.execute(
        select(UserAgent).where(UserAgent.user_id == user_id, UserAgent.agent_type == agent_type)
    )
    agent = result.scalar_one_or_none()
    if agent is None:
        agent = UserAgent(user_id=user_id, agent_type=agent_type)
        session.add(agent)
    agent.active = active
    agent.updated_at = utcnow()
    await session.flush()
    return agent


async def list_services(session: AsyncSession, *, user_id: int) -> Sequence[UserService]:
    result = await session.execute(
        select(UserService).where(UserService.user_id == user_id).order_by(UserService.service)
    )
    return result.scalars().all()


async def set_service(
    session: AsyncSession, *, user_id: int, service: str, connected: bool
) -> UserService:
    result = await session.execute(
        select(UserService).where(UserService.user_id == user_id, UserService.service == service)
    )
    row = result.scalar_one_or_none()
    if row is None:
        row = UserService(user_id=user_id, service=service)
        session.add(row)
    row.connected = connected
    row.updated_at = utcnow()
    await session.flush()
    return row
