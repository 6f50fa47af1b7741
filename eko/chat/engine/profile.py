"""Per-user chat state kept in users.settings JSON, and the required facts of the intro.

users.settings holds what is configuration or state rather than a fact about the person:

    locale_main, timezone                      (read by the context loader)
    intro_smalltalk_turns, intro_smalltalk_done (written by the engine during the intro)
    discovery: {forced, status, transition_window, transition_reason}   (the Discovery gates)

Facts about the person (first_name, use_tu_form, main_city, main_activity, …) are user_facts rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.models import User

# The seed's user_facts_required, in the order the intro asks for them.
REQUIRED_KEYS: tuple[str, ...] = ("first_name", "use_tu_form", "main_city", "main_activity")

DiscoveryStatus = Literal["not_started", "in_progress", "complete"]
DISCOVERY_STATUSES: tuple[str, ...] = ("not_started", "in_progress", "complete")


@dataclass(frozen=True, slots=True)
class DiscoveryGates:
    forced: bool = False
    status: str = "not_started"
    transition_window: str | None = None
    transition_reason: str | None = None

    @property
    def active(self) -> bool:
        """The seed: forced and not complete -> Discovery overrides (almost) everything."""
        return self.forced and self.status != "complete"

    @classmethod
    def of(cls, settings: dict[str, Any]) -> DiscoveryGates:
        raw = settings.get("discovery")
        if not isinstance(raw, dict):
            return cls()
        status = raw.get("status")
        return cls(
            forced=bool(raw.get("forced", False)),
            status=status if status in DISCOVERY_STATUSES else "not_started",
            transition_window=_str_or_none(raw.get("transition_window")),
            transition_reason=_str_or_none(raw.get("transition_reason")),
        )

    def to_settings(self) -> dict[str, Any]:
        return {
            "forced": self.forced,
            "status": self.status,
            "transition_window": self.transition_window,
            "transition_reason": self.transition_reason,
        }


def _str_or_none(value: Any) -> str | None:
    return str(value) if value is not None else None


async def update_settings(session: AsyncSession, *, user_id: int, **changes: Any) -> None:
    """Merge keys into users.settings (a new dict, so the JSON change is persisted)."""
    user = await session.get(User, user_id, populate_existing=True)
    if user is None:
        return
    user.settings = {**(user.settings or {}), **changes}
