"""What the lobby's model calls must answer (JSON, validated)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field

from eko.memory.outputs import Confidence, bounded_text

Tone = Literal["playful", "helpful", "technical"]
TONE_VALUES = ("playful", "helpful", "technical")


def _tone_or_none(value: Any) -> Any:
    # An unknown tone is no tone (the context's hint applies), not an invalid answer.
    if isinstance(value, str) and value.strip().lower() in TONE_VALUES:
        return value.strip().lower()
    return None


LenientTone = Annotated[Tone | None, BeforeValidator(_tone_or_none)]


class ReflectionDecision(BaseModel):
    """The seed's {action, message, reason, tone}."""

    action: Literal["pass", "message"]
    message: bounded_text(600) = ""  # type: ignore[valid-type]
    reason: bounded_text(400) = ""  # type: ignore[valid-type]
    tone: LenientTone = None


class OpportunityDecision(ReflectionDecision):
    """The opportunity path also says how sure it is, and which curiosity it poses (0: none)."""

    confidence: Confidence = 0.0
    goal: int = Field(default=0, ge=0, le=100)


class SummaryOutput(BaseModel):
    summary: bounded_text(800)  # type: ignore[valid-type]


class OpportunityMessage(BaseModel):
    """The pre-scored path (eko/lobby/prescore.py) already decided to speak: only the text."""

    message: bounded_text(600)  # type: ignore[valid-type]
