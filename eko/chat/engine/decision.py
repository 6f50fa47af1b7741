"""The vocabulary of one orchestration: intents, modes, context levels, and what was decided.

`Proposal` is what the model proposed (or the deterministic fallback); `OrchestratorResult` is
what the backend decided after its guardrails: the source of truth for the plan, the response
writer and the assistant message's metadata.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

# What the user wants. smalltalk_intro and discovery are also modes; the model may propose
# smalltalk_intro, but only the backend's gates make either of them final.
Intent = Literal[
    "smalltalk_intro",
    "discovery",
    "small_talk",
    "amabilities",
    "general_question",
    "functional_question",
    "decision_support",
    "motivational_guidance",
    "professional_request",
    "action_request",
    "deep_work",
    "urgent_request",
    "sensitive_question",
]
INTENTS: tuple[str, ...] = get_args(Intent)

Mode = Literal["normal", "smalltalk_intro", "discovery"]
ContextLevel = Literal["light", "medium", "max"]
CONTEXT_LEVELS: tuple[str, ...] = get_args(ContextLevel)


def level_rank(level: str) -> int:
    return CONTEXT_LEVELS.index(level) if level in CONTEXT_LEVELS else 0


def lowest_level(*levels: str) -> str:
    return min(levels, key=level_rank)


@dataclass(frozen=True, slots=True)
class Proposal:
    """The orchestrator model's output, or the deterministic fallback."""

    intent: str
    context_level: str
    need_web: bool = False
    web_search_prompt: str = ""
    scope_need: bool = False
    scopes_selected: tuple[str, ...] = ()
    confidence: float = 0.0
    decision: str = ""
    notes: str = ""

    def to_meta(self) -> dict[str, Any]:
        data = asdict(self)
        data["scopes_selected"] = list(self.scopes_selected)
        return data


# The seed's deterministic fallback: "general intent, light context", nothing external.
FALLBACK_PROPOSAL = Proposal(
    intent="general_question",
    context_level="light",
    decision="fallback",
    notes="deterministic fallback",
)


@dataclass(frozen=True, slots=True)
class Signals:
    """Computed in Python before the model call, from the message and the previous turn."""

    short_reply: bool = False
    amabilities: bool = False
    small_talk: bool = False
    # A question or an explicit request ("?", "peux-tu…", "how do I…").
    explicit_request: bool = False
    # An explicit request long enough to be a real task, not an aside.
    task_like: bool = False
    previous_intent: str | None = None
    previous_mode: str | None = None

    def to_meta(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class OrchestratorResult:
    """What the backend decided for this turn (after the guardrails)."""

    intent: str
    mode: str
    intent_eligible: bool
    intent_block_reason: str | None
    context_level: str
    need_web: bool
    web_search_prompt: str
    scope_need: bool
    scopes_selected: tuple[str, ...]
    gates: dict[str, Any]
    capabilities: dict[str, bool]
    signals: Signals
    # What the model proposed (None when it gave nothing usable).
    proposal: Proposal | None
    # Why the model's proposal was not used (low_confidence, invalid_output, llm_error…).
    fallback_reason: str | None = None
    # Every guardrail that changed something, in order (observability, tests).
    rules_applied: list[str] = field(default_factory=list)
    # Provider, model and duration of the orchestrator's model call, when there was one.
    call: dict[str, Any] = field(default_factory=dict)

    @property
    def smalltalk_target_key(self) -> str | None:
        key = self.gates.get("smalltalk_target_key")
        return key if self.mode == "smalltalk_intro" and isinstance(key, str) else None

    def to_meta(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "mode": self.mode,
            "intent_eligible": self.intent_eligible,
            "intent_block_reason": self.intent_block_reason,
            "context_level": self.context_level,
            "need_web": self.need_web,
            "web_search_prompt": self.web_search_prompt,
            "scope_need": self.scope_need,
            "scopes_selected": list(self.scopes_selected),
            "gates": dict(self.gates),
            "capabilities": dict(self.capabilities),
            "signals": self.signals.to_meta(),
            "proposed": self.proposal.to_meta() if self.proposal is not None else None,
            "confidence": self.proposal.confidence if self.proposal is not None else None,
            "fallback": self.fallback_reason,
            "rules_applied": list(self.rules_applied),
            "call": dict(self.call),
        }
