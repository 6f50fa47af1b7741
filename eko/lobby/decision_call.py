"""One model call recorded on the reflection: a directive call whose JSON decides message vs
pass, or (pre-scored path) one that only writes the message.

The reflection and the opportunity path both ask this way: the call is counted, a failure is a
pass (never a lost slot) with its reason, and the model, tokens, reason and tone are kept."""

from __future__ import annotations

from typing import TypeVar

import structlog
from pydantic import BaseModel

from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage
from eko.lobby.outputs import ReflectionDecision
from eko.store.lobby_models import Reflection

log = structlog.get_logger("eko.lobby")

DecisionT = TypeVar("DecisionT", bound=ReflectionDecision)
OutputT = TypeVar("OutputT", bound=BaseModel)


async def ask_decision(
    runtime: LLMRuntime,
    reflection: Reflection,
    prompt: str,
    *,
    output: type[DecisionT],
    purpose: str,
) -> DecisionT | None:
    decision = await ask_output(runtime, reflection, prompt, output=output, purpose=purpose)
    if decision is not None:
        reflection.reason = decision.reason
        reflection.tone = decision.tone
    return decision


async def ask_output(
    runtime: LLMRuntime,
    reflection: Reflection,
    prompt: str,
    *,
    output: type[OutputT],
    purpose: str,
) -> OutputT | None:
    """The validated answer, or None (logged, the reason on the reflection) when the call
    failed or its answer did not validate."""
    reflection.model_calls += 1
    try:
        completion = await runtime.complete(
            [ChatMessage("user", prompt)],
            output=output,
            purpose=purpose,
            room_id=reflection.room_id,
            priority="background",
        )
    except Exception as exc:  # a failed model call is a pass, never a lost slot
        log.warning(
            "lobby.decision.model_failed",
            purpose=purpose,
            room_id=reflection.room_id,
            error=str(exc),
        )
        reflection.reason = f"model call failed: {type(exc).__name__}"
        return None
    reflection.llm_model = completion.model
    reflection.llm_tokens = sum(
        a.usage.input_tokens + a.usage.output_tokens for a in completion.attempts
    )
    if completion.data is None:
        reflection.reason = "the model's answer was not valid JSON"
    return completion.data
