"""Settings of the lobby and of the reflexive chain: sections of eko.config.Settings (which
inherits them, so they read from EKO_* like every other setting)."""

from __future__ import annotations

from pathlib import Path

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
    # Interventions per lobby and UTC day.
    reflection_max_per_day: int = Field(default=5, ge=0)
    reflection_cron: str = "0 */3 * * *"
    # Lobby messages given to the reflection; facts and self items searched around the goal.
    reflection_recent_messages: int = Field(default=20, ge=1, le=200)
    reflection_search_k: int = Field(default=5, ge=1, le=50)
    # The opportunity path (after an activity summary) speaks only at this confidence or above.
    reflection_opportunity_min_confidence: float = Field(default=0.85, ge=0, le=1)
    activity_summary_cron: str = "*/10 * * * *"
    activity_summary_max_messages: int = Field(default=200, ge=1)


class ChainSettings(BaseModel):
    # --- the reflexive chain: OL1 research -> M1 analysis -> M2 review (eko/chain/) ---
    # Messages classified reflexive are answered by the chain; simple ones by the chat engine.
    # Empty = auto: on when the primary chat provider is a remote model; off on the bundled
    # local model alone (3 to 8 model calls per answer on a CPU: minutes, past the deadline).
    chain_enabled: bool | None = None
    # Turn budgets per stage (seed: 4/3/2) and the whole chain's cap (seed: 8).
    chain_budget_ol1: int = Field(default=4, ge=1, le=20)
    chain_budget_m1: int = Field(default=3, ge=1, le=20)
    chain_budget_m2: int = Field(default=2, ge=1, le=20)
    chain_global_cap: int = Field(default=8, ge=1, le=50)
    # The provider (its `name`, or kind, in llm_providers) of each stage, e.g.
    # '{"OL1": "local", "M1": "openai"}'. A stage not listed uses every configured provider.
    chain_stage_providers: dict[str, str] = Field(default_factory=dict)
    chain_stage_timeout_s: float = Field(default=60.0, gt=0)
    chain_max_tokens: int = Field(default=300, ge=16, le=8192)
    # OpenAI-compatible providers get the tools natively (the `tools` field); others (the
    # bundled model) through the text format [TOOL:name:{args}].
    chain_native_tools: bool = True
    # Read-only workspace tools (list_dir, read_file, grep) confined to this folder; none: off.
    chain_workspace: Path | None = None
    # The classifier (eko/chain/classify.py): under this length a message is simple, from
    # this one reflexive; extra keywords and categories on top of the seed's.
    chain_short_chars: int = Field(default=50, ge=0)
    chain_long_chars: int = Field(default=400, ge=1)
    chain_extra_keywords: list[str] = Field(default_factory=list)
    chain_extra_categories: list[str] = Field(default_factory=list)


class RecallSettings(BaseModel):
    # --- recall over raw turns (eko/memory/turn_recall.py, turn_index.py) ---
    # Nearest turns by meaning fused with the full-text matches (0: words only). Each user and
    # assistant message is embedded once (collection "turn"); `eko memory reindex` redoes a room.
    memory_recall_dense_k: int = Field(default=12, ge=0, le=100)
    # Each exchange is embedded by an after-reply job as it arrives; a context build embeds
    # only what a lost job left unindexed among the newest N older than the recent window.
    # Older gaps wait for `eko memory reindex`. Bounds the cost of a read after an import.
    memory_recall_catch_up: int = Field(default=64, ge=0, le=10_000)
    # Turns before and after each of the best `memory_recall_neighbours_head` recalled turns
    # that come with it (the exchange around it: the question it answers, the answer it got);
    # the hits below come alone, so the budget holds more of them. A list question ("what
    # books has she read?") takes none. Chosen on LoCoMo's dev questions (`eko bench context
    # --split dev-q`): 2 around the best 10 beat 1 around every hit by ~3 points at 8k chars.
    memory_recall_neighbours: int = Field(default=2, ge=0, le=5)
    memory_recall_neighbours_head: int = Field(default=10, ge=0, le=100)
    # A day or month the question names ("on 3 June, 2023", "en août 2023") also recalls that
    # period's turns that share its other words (eko/memory/dates.py, date_recall.py).
    memory_recall_dates: bool = True
    # A question naming one member of the room ("what books has Melanie read?") is mostly
    # answered by what that member said (95% of LoCoMo's evidence turns for such questions):
    # their recalled turns come first, this many for each turn by anyone else (who keeps a
    # place: "what did Melanie's friend tell her?"). 0: off. On dev-q, 4: 84.2% -> 86.2% at 8k.
    memory_recall_named_speaker: int = Field(default=4, ge=0, le=50)
