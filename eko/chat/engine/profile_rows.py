"""What the context loader reads about the user and the room before the orchestrator: the
stored facts, the active agents, the connected services and the docs scopes the room searches.

Read ahead in the session that reads the turn's user and recent window (Answerer, through
ContextLoader.read_ahead: no transaction of its own), or by the loader for a bare turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store import chat_profile
from eko.store.chat_models import DocScope, UserFact


@dataclass(frozen=True, slots=True)
class FactItem:
    fact_key: str
    category: str
    scope: str
    value_type: str
    value: Any
    confidence: float
    is_estimated: bool
    source_ref: str | None
    notes: str | None
    updated_at: str

    @classmethod
    def of(cls, row: UserFact) -> FactItem:
        return cls(
            fact_key=row.fact_key,
            category=row.category,
            scope=row.scope,
            value_type=row.value_type,
            value=row.value,
            confidence=float(row.confidence),
            is_estimated=bool(row.is_estimated),
            source_ref=row.source_ref,
            notes=row.notes,
            updated_at=_iso(row.updated_at),
        )

    def to_block(self) -> dict[str, Any]:
        return {
            "fact_key": self.fact_key,
            "category": self.category,
            "scope": self.scope,
            "value_type": self.value_type,
            "value": self.value,
            "confidence": self.confidence,
            "is_estimated": self.is_estimated,
            "source_ref": self.source_ref,
            "notes": self.notes,
            "updated_at": self.updated_at,
        }


@dataclass(frozen=True, slots=True)
class DocScopeInfo:
    name: str
    description: str


@dataclass(frozen=True, slots=True)
class ProfileRows:
    facts: list[FactItem]
    agents: list[str]  # active ones
    services: list[str]  # connected ones
    docs_scopes: list[DocScopeInfo]  # the shared scopes
    room_scope: DocScopeInfo | None  # the room's own (it exists while the room has files)


async def read_profile_rows(session: AsyncSession, *, user_id: int, room_id: str) -> ProfileRows:
    facts = [FactItem.of(row) for row in await chat_profile.list_facts(session, user_id=user_id)]
    agents = [
        a.agent_type for a in await chat_profile.list_agents(session, user_id=user_id) if a.active
    ]
    services = [
        s.service for s in await chat_profile.list_services(session, user_id=user_id) if s.connected
    ]
    scopes = await session.execute(
        select(DocScope.name, DocScope.description, DocScope.room_id)
        .where(or_(DocScope.room_id.is_(None), DocScope.room_id == room_id))
        .order_by(DocScope.name)
    )
    shared: list[DocScopeInfo] = []
    own: DocScopeInfo | None = None
    for name, description, scope_room in scopes:
        if scope_room is None:
            shared.append(DocScopeInfo(name, description or ""))
        else:
            own = DocScopeInfo(name, description or "")
    return ProfileRows(facts, agents, services, shared, own)


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value is not None else ""
