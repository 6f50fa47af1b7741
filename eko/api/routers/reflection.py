"""A lobby's reflection: trigger one now, read its stats, history and live phase
(seed reactive-eko's /reflection/trigger and /reflection/status, per lobby)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, time
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession

from eko.api.deps import CurrentUser, ServicesDep, SessionDep, room_for_user
from eko.api.problems import Problem, problem_responses
from eko.lobby import store
from eko.lobby.live import reflection_dict, stats_dict
from eko.store.models import Room, utcnow

router = APIRouter(prefix="/v1/rooms/{room_id}/reflection", tags=["reflection"])

HISTORY = 50


class TriggerBody(BaseModel):
    # Also speak when the lobby's last message is the assistant's own.
    force: bool = False


class ReflectionOut(BaseModel):
    reflection: dict[str, Any]
    stats: dict[str, Any]


class TodayOut(BaseModel):
    """This UTC day's reflections of the lobby (the status bar's panel counters)."""

    day: str
    reflections: int
    messages: int
    passes: int
    rate_limited: int
    model_calls: int
    tokens: int


class StatusOut(BaseModel):
    room_id: str
    stats: dict[str, Any]
    today: TodayOut
    latest: dict[str, Any] | None
    history: list[dict[str, Any]] = Field(description="The last 50 reflections, newest first.")
    live: dict[str, Any] | None = Field(description="The phase of a reflection in this process.")


def _lobby(room: Room) -> Room:
    if room.kind != "lobby":
        raise Problem(409, "not-a-lobby", "Not a lobby", f"Room {room.id!r} is a {room.kind} room.")
    return room


@router.post("/trigger", responses=problem_responses(404, 409, 429))
async def trigger(
    room_id: str,
    user: CurrentUser,
    session: SessionDep,
    services: ServicesDep,
    body: TriggerBody | None = None,
) -> ReflectionOut:
    """Reflect now (bypasses the lobby's rate limits, and is not counted in its daily budget;
    `force` also bypasses the skip when the last message is the assistant's). One manual
    reflection per user per EKO_REFLECTION_MANUAL_INTERVAL_S (429 with Retry-After); staff
    are not limited."""
    room = _lobby(await room_for_user(session, room_id=room_id, user=user))
    wait = await services.lobby.manual.retry_after_s(user)
    if wait is not None:
        raise Problem(
            429,
            "too-many-requests",
            "Too many manual reflections",
            f"One manual reflection per {services.lobby.manual.interval_s:g} s; retry in {wait} s.",
            headers={"Retry-After": str(wait)},
            retry_after_s=wait,
        )
    reflection = await services.lobby.reflector.reflect(
        room.id, trigger="manual", force=bool(body and body.force), by=user.public_id
    )
    async with services.database.session() as read:
        stats = await store.get_stats(read, room_id=room.id)
    return ReflectionOut(reflection=reflection_dict(reflection), stats=stats_dict(stats))


@router.get("/status", responses=problem_responses(404, 409))
async def status(
    room_id: str, user: CurrentUser, session: SessionDep, services: ServicesDep
) -> StatusOut:
    room = _lobby(await room_for_user(session, room_id=room_id, user=user))
    stats = await store.get_stats(session, room_id=room.id)
    history = [
        reflection_dict(r) for r in await store.history(session, room_id=room.id, limit=HISTORY)
    ]
    live = services.lobby.live.get(room.id)
    return StatusOut(
        room_id=room.id,
        stats=stats_dict(stats),
        today=await _today(session, room.id, utcnow()),
        latest=history[0] if history else None,
        history=history,
        live=live.to_dict() if live is not None else None,
    )


async def _today(session: AsyncSession, room_id: str, now: datetime) -> TodayOut:
    start = datetime.combine(now.date(), time.min, tzinfo=now.tzinfo)
    counts = await store.day_counts(session, room_id=room_id, since=start)
    return TodayOut(day=now.date().isoformat(), **asdict(counts))
