"""Live view of reflections: the phase each lobby's reflection is in (gathering → context →
thinking → done), and the events `/v1/events` shows (`reflection:phase`, `reflection:update`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from eko.events.types import Event, EventBus
from eko.store.lobby_models import Reflection, ReflectionStats

Phase = Literal["gathering", "context", "thinking", "done"]
PHASES: tuple[Phase, ...] = ("gathering", "context", "thinking", "done")


@dataclass(frozen=True, slots=True)
class PhaseState:
    phase: Phase
    at: datetime
    trigger: str
    action: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "at": self.at.isoformat(),
            "trigger": self.trigger,
            "action": self.action,
        }


class LivePhases:
    """The current phase per lobby, in this process, published as it changes."""

    def __init__(self, events: EventBus | None) -> None:
        self._events = events
        self._phases: dict[str, PhaseState] = {}

    def get(self, room_id: str) -> PhaseState | None:
        return self._phases.get(room_id)

    async def enter(
        self, room_id: str, phase: Phase, *, at: datetime, trigger: str, action: str | None = None
    ) -> None:
        state = PhaseState(phase=phase, at=at, trigger=trigger, action=action)
        self._phases[room_id] = state
        if self._events is not None:
            await self._events.publish(
                Event(type="reflection:phase", room_id=room_id, data=state.to_dict())
            )

    async def update(self, stats: ReflectionStats | None, latest: Reflection) -> None:
        if self._events is not None:
            await self._events.publish(
                Event(
                    type="reflection:update",
                    room_id=latest.room_id,
                    data={"stats": stats_dict(stats), "latest": reflection_dict(latest)},
                )
            )


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def stats_dict(stats: ReflectionStats | None) -> dict[str, Any]:
    if stats is None:
        return {
            "total_reflections": 0,
            "pass_count": 0,
            "message_count": 0,
            "rate_limited_count": 0,
            "total_tokens": 0,
            "model_calls": 0,
            "last_message_at": None,
            "next_allowed_at": None,
            "interventions_today": 0,
            "cooldown_s": None,
            "pending_goal_id": None,
        }
    return {
        "total_reflections": stats.total,
        "pass_count": stats.pass_count,
        "message_count": stats.message_count,
        "rate_limited_count": stats.rate_limited_count,
        "total_tokens": stats.total_tokens,
        "model_calls": stats.model_calls,
        "last_message_at": _iso(stats.last_message_at),
        "next_allowed_at": _iso(stats.next_allowed_at),
        "interventions_today": stats.day_count,
        "day": stats.day,
        "cooldown_s": stats.cooldown_s or None,
        "pending_goal_id": stats.pending_goal_id,
    }


def reflection_dict(reflection: Reflection) -> dict[str, Any]:
    return {
        "id": reflection.id,
        "room_id": reflection.room_id,
        "timestamp": _iso(reflection.created_at),
        "trigger": reflection.trigger,
        "forced": reflection.forced,
        "action": reflection.action,
        "skipped": reflection.skipped,
        "message": reflection.message,
        "message_id": reflection.message_id,
        "reason": reflection.reason,
        "tone": reflection.tone,
        "goal_id": reflection.goal_id,
        "duplicate_goal_ids": list(reflection.duplicate_goal_ids or []),
        "activity_summary": reflection.activity_summary,
        "goals_count": reflection.goals_count,
        "facts_count": reflection.facts_count,
        "llm_model": reflection.llm_model,
        "llm_tokens": reflection.llm_tokens,
        "model_calls": reflection.model_calls,
        "duration_ms": round(reflection.duration_ms, 1),
        "rate_limited": reflection.rate_limited,
    }
