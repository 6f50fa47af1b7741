"""Settings of the chat engine's orchestrator (its confidence floor, budget and output
contract): a section of eko.config.Settings."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

OrchestratorContract = Literal["auto", "full", "compact"]
OrchestratorRouter = Literal["auto", "model", "rules"]


class OrchestratorSettings(BaseModel):
    # The orchestrator's output is trusted only at this confidence or above (seed: 0.8);
    # below it the deterministic fallback applies (general intent, light context).
    orchestrator_min_confidence: float = Field(default=0.8, ge=0, le=1)
    # Token budget of the orchestrator's JSON answer, and how long it may take before fallback.
    orchestrator_max_tokens: int = Field(default=160, ge=32, le=2048)
    orchestrator_timeout_s: float = Field(default=40.0, gt=0)
    # The orchestrator's JSON contract (eko/chat/engine/orchestrator_contract.py): "full" is the
    # seed's (confidence, decision, notes, payload), "compact" only what the backend acts on
    # (intent, context level; a web query and scopes when they exist) — a fifth of the tokens
    # to generate. "auto": compact when the primary chat provider is a small local model.
    orchestrator_contract: OrchestratorContract = "auto"
    # Who proposes the route: "model" (one model call, the seed's orchestrator), "rules" (the
    # message's words, eko/chat/engine/rule_router.py: no model call), "auto": rules when the
    # primary chat provider is a small local model — it routes no better than the rules
    # (`eko bench routing`) and its call costs seconds before every reply.
    orchestrator_router: OrchestratorRouter = "auto"

    def orchestrator_compact(self, *, primary_is_small: bool) -> bool:
        """Whether the orchestrator uses the compact contract (`primary_is_small`: the first
        provider of the runtime says it prefers compact output, as the local model does)."""
        if self.orchestrator_contract == "auto":
            return primary_is_small
        return self.orchestrator_contract == "compact"

    def routes_by_rules(self, *, primary_is_small: bool) -> bool:
        """Whether the route is proposed by rules instead of a model call."""
        if self.orchestrator_router == "auto":
            return primary_is_small
        return self.orchestrator_router == "rules"
