"""A user's chat profile: facts, agents (subscriptions), connected services, pro plan, discovery.

A user reads and edits their own facts and services; staff manage anyone's, and alone set
agents, the pro plan and the discovery gates (billing and onboarding decisions).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, status
from sqlalchemy.ext.asyncio import AsyncSession

from eko.api.deps import CurrentUser, ServicesDep, SessionDep, StaffUser
from eko.api.problems import Problem, problem_responses
from eko.api.schemas.chat import (
    FACT_KEY_PATTERN,
    NAME_PATTERN,
    AgentIn,
    ChatProfileOut,
    DiscoveryIn,
    FactIn,
    FactOut,
    ProIn,
    QuotaOut,
    ServiceIn,
)
from eko.chat.engine.capabilities import compute_capabilities
from eko.chat.engine.profile import REQUIRED_KEYS, DiscoveryGates, update_settings
from eko.chat.engine.quota import QuotaStatus
from eko.store import chat_profile
from eko.store import users as user_repo
from eko.store.models import User

# Every route addresses a user who may not exist (or not be visible): 404.
router = APIRouter(
    prefix="/v1/users/{public_id}", tags=["chat profile"], responses=problem_responses(404)
)
STAFF_ONLY = problem_responses(403)

FactKey = Annotated[str, Path(pattern=FACT_KEY_PATTERN)]
Name = Annotated[str, Path(pattern=NAME_PATTERN)]


async def _target(session: AsyncSession, public_id: str, caller: User) -> User:
    """The user whose profile is addressed: oneself, or anyone for staff (404 otherwise)."""
    if caller.public_id != public_id and caller.role != "staff":
        raise Problem(404, "user-not-found", "User not found", f"No user {public_id!r}.")
    target = await user_repo.get_by_public_id(session, public_id=public_id)
    if target is None:
        raise Problem(404, "user-not-found", "User not found", f"No user {public_id!r}.")
    return target


@router.get("/chat-profile")
async def get_profile(
    public_id: str, user: CurrentUser, session: SessionDep, services: ServicesDep
) -> ChatProfileOut:
    target = await _target(session, public_id, user)
    facts = await chat_profile.list_facts(session, user_id=target.id)
    agents = await chat_profile.list_agents(session, user_id=target.id)
    connected = await chat_profile.list_services(session, user_id=target.id)
    report = compute_capabilities(
        services.engine.catalog,
        active_agents=[a.agent_type for a in agents if a.active],
        connected_services=[s.service for s in connected if s.connected],
    )
    known = {fact.fact_key for fact in facts}
    return ChatProfileOut(
        public_user_id=target.public_id,
        is_pro=target.is_pro,
        quota=QuotaOut.of(QuotaStatus.of(target)),
        facts=[FactOut.of(fact) for fact in facts],
        required_keys=list(REQUIRED_KEYS),
        missing_required=[key for key in REQUIRED_KEYS if key not in known],
        agents={a.agent_type: a.active for a in agents},
        services={s.service: s.connected for s in connected},
        capabilities=report.flags,
        capability_details=report.to_meta(),
        settings=dict(target.settings or {}),
    )


@router.put("/facts/{fact_key}")
async def put_fact(
    public_id: str, fact_key: FactKey, body: FactIn, user: CurrentUser, session: SessionDep
) -> FactOut:
    target = await _target(session, public_id, user)
    if body.value is None:
        raise Problem(422, "empty-fact", "Empty fact", "A fact needs a value (DELETE removes it).")
    fact = await chat_profile.upsert_fact(
        session,
        user_id=target.id,
        fact_key=fact_key,
        value=body.value,
        category=body.category,
        scope=body.scope,
        value_type=body.value_type,
        confidence=body.confidence,
        is_estimated=body.is_estimated,
        source_ref=body.source_ref or f"api:{user.public_id}",
        notes=body.notes,
    )
    return FactOut.of(fact)


@router.delete("/facts/{fact_key}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_fact(
    public_id: str, fact_key: FactKey, user: CurrentUser, session: SessionDep
) -> None:
    target = await _target(session, public_id, user)
    if not await chat_profile.delete_fact(session, user_id=target.id, fact_key=fact_key):
        raise Problem(404, "fact-not-found", "Fact not found", f"No fact {fact_key!r}.")


@router.put("/services/{service}")
async def put_service(
    public_id: str, service: Name, body: ServiceIn, user: CurrentUser, session: SessionDep
) -> dict[str, bool]:
    target = await _target(session, public_id, user)
    await chat_profile.set_service(
        session, user_id=target.id, service=service, connected=body.connected
    )
    rows = await chat_profile.list_services(session, user_id=target.id)
    return {row.service: row.connected for row in rows}


@router.put("/agents/{agent_type}", responses=STAFF_ONLY)
async def put_agent(
    public_id: str,
    agent_type: Name,
    body: AgentIn,
    staff: StaffUser,
    session: SessionDep,
    services: ServicesDep,
) -> dict[str, bool]:
    target = await _target(session, public_id, staff)
    catalog = services.engine.catalog
    if agent_type not in catalog.agents:
        raise Problem(
            422,
            "unknown-agent",
            "Unknown agent",
            f"No agent {agent_type!r}; the catalog has: {', '.join(sorted(catalog.agents))}.",
        )
    await chat_profile.set_agent(
        session, user_id=target.id, agent_type=agent_type, active=body.active
    )
    rows = await chat_profile.list_agents(session, user_id=target.id)
    return {row.agent_type: row.active for row in rows}


@router.put("/pro", responses=STAFF_ONLY)
async def put_pro(public_id: str, body: ProIn, staff: StaffUser, session: SessionDep) -> QuotaOut:
    target = await _target(session, public_id, staff)
    target.is_pro = body.is_pro
    await session.flush()
    return QuotaOut.of(QuotaStatus.of(target))


@router.put("/discovery", responses=STAFF_ONLY)
async def put_discovery(
    public_id: str, body: DiscoveryIn, staff: StaffUser, session: SessionDep
) -> dict[str, object]:
    target = await _target(session, public_id, staff)
    gates = DiscoveryGates(
        forced=body.forced,
        status=body.status,
        transition_window=body.transition_window,
        transition_reason=body.transition_reason,
    )
    await update_settings(session, user_id=target.id, discovery=gates.to_settings())
    return gates.to_settings()
