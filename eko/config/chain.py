"""Settings of the reflexive chain (eko/chain/): a section of eko.config.Settings (which
inherits it, so it reads from EKO_* like every other setting)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field


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
