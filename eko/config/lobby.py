"""Settings of the lobby (eko/lobby/): a section of eko.config.Settings (which inherits it, so
it reads from EKO_* like every other setting)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class LobbySettings(BaseModel):
    # --- the lobby: activity summaries and reflection (eko/lobby/, seed reactive-eko) ---
    lobby_proactive_enabled: bool = True
    # The recent window of a lobby, in turns before the message answered (the seed: the last
    # 20 messages, the mention included; most lobby messages get no answer, so a turn is
    # mostly one message; a direct room's recent_turns is too short for several people).
    lobby_recent_turns: int = Field(default=19, ge=1, le=200)
    # After an intervention, no other one for this long (doubled while questions go
    # unanswered, up to the cap; an answered one resets it).
    reflection_cooldown_s: float = Field(default=30 * 60, ge=0)
    reflection_cooldown_max_s: float = Field(default=8 * 3600, ge=0)
    # An asked question nobody answered within this long counts as ignored.
    reflection_answer_window_s: float = Field(default=2 * 3600, gt=0)
    # Scheduled (and opportunity) interventions per lobby and UTC day; manual ones are not
    # counted here.
    reflection_max_per_day: int = Field(default=5, ge=0)
    # The manual trigger (POST /v1/rooms/{id}/reflection/trigger): one reflection that reaches
    # the model per user per this many seconds (429 with Retry-After); staff are not limited.
    # 0 = no limit.
    reflection_manual_interval_s: float = Field(default=600.0, ge=0)
    reflection_cron: str = "0 */3 * * *"
    # Lobby messages given to the reflection; facts and self items searched around the goal.
    reflection_recent_messages: int = Field(default=20, ge=1, le=200)
    reflection_search_k: int = Field(default=5, ge=1, le=50)
    # The opportunity path (after an activity summary) speaks only at this confidence or above.
    reflection_opportunity_min_confidence: float = Field(default=0.85, ge=0, le=1)
    # Who decides whether to speak after an activity summary: "model" (one call answers
    # message-or-pass), "rules" (eko/lobby/prescore.py decides, the model only writes the
    # message), "auto" (rules when the first provider is a small local model, which passes
    # on almost everything when asked to decide).
    lobby_decider: Literal["auto", "rules", "model"] = "auto"
    activity_summary_cron: str = "*/10 * * * *"
    activity_summary_max_messages: int = Field(default=200, ge=1)

    def lobby_decides_by_rules(self, *, primary_is_small: bool) -> bool:
        """Whether the opportunity path decides by rules (`primary_is_small`: the first
        provider is a small local model)."""
        if self.lobby_decider == "auto":
            return primary_is_small
        return self.lobby_decider == "rules"
