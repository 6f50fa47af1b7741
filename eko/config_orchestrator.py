"""Settings of the orchestrator's output contract: a section of eko.config.Settings."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

OrchestratorContract = Literal["auto", "full", "compact"]


class OrchestratorSettings(BaseModel):
    # The orchestrator's JSON contract (eko/chat/engine/orchestrator_contract.py): "full" is the
    # seed's (confidence, decision, notes, payload), "compact" only what the backend acts on
    # (intent, context level; a web query and scopes when they exist) — a fifth of the tokens
    # to generate. "auto": compact when the primary chat provider is a small local model.
    orchestrator_contract: OrchestratorContract = "auto"

    def orchestrator_compact(self, *, primary_is_small: bool) -> bool:
        """Whether the orchestrator uses the compact contract (`primary_is_small`: the first
        provider of the runtime says it prefers compact output, as the local model does)."""
        if self.orchestrator_contract == "auto":
            return primary_is_small
        return self.orchestrator_contract == "compact"
