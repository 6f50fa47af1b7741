"""The orchestrator: deterministic state -> ONE model call -> deterministic guardrails.

The model answers under the seed's universal output contract

    {confidence, decision, notes, payload: {intent, context_level, need_web,
     web_search_prompt, scope_need, scopes_selected}}

with every string bounded and intent / context_level as enums, so a small local model's JSON
grammar stays short. Its answer is a proposal: `guardrails.apply_guardrails` decides. Any
failure (timeout, every provider down, invalid JSON, low confidence) ends in the deterministic
fallback, and the reason is recorded.
"""

from __future__ import annotations

import asyncio
import json
from functools import lru_cache
from typing import Annotated, Any, Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model

from eko.chat.engine.capabilities import AgentCatalog
from eko.chat.engine.context_loader import ChatContext
from eko.chat.engine.decision import ContextLevel, Intent, OrchestratorResult, Proposal, Signals
from eko.chat.engine.guardrails import apply_guardrails
from eko.chat.engine.registry import NodeRegistry
from eko.chat.engine.templates import fill
from eko.chat.pipeline import Turn
from eko.config import Settings
from eko.llm.deadline import message_deadline
from eko.llm.errors import AllProvidersFailed, LLMError
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage
from eko.prompts.library import PromptLibrary

log = structlog.get_logger("eko.chat")

SYSTEM_PROMPT = "orchestrator/system.md"
# Per message of the conversation shown to the orchestrator (it needs the gist, not the text).
_MESSAGE_CHARS = 300


# Confidence is asked on a 0.05 grid: a JSON number has no length bound in a grammar, and a
# small model happily writes 0.99999999… (a token per digit). Validation takes any float in [0, 1].
CONFIDENCE_STEPS = [round(step * 0.05, 2) for step in range(21)]
Confidence = Annotated[
    float, Field(ge=0, le=1), WithJsonSchema({"type": "number", "enum": CONFIDENCE_STEPS})
]


class OrchestratorPayload(BaseModel):
    model_config = ConfigDict(extra="forbid")
    intent: Intent
    context_level: ContextLevel
    need_web: bool
    web_search_prompt: str = Field(max_length=100)
    scope_need: bool
    # Narrowed to the existing scope names for each call (see output_model).
    scopes_selected: list[Annotated[str, Field(max_length=64)]] = Field(max_length=3)


class OrchestratorOutput(BaseModel):
    """The seed's output contract; the backend trusts it only at confidence >= 0.8.

    Every string is bounded and intent / context_level are enums: under a JSON grammar a small
    model fills strings up to their bound, and each character costs generation time.
    """

    model_config = ConfigDict(extra="forbid")
    confidence: Confidence
    decision: str = Field(max_length=32)
    notes: str = Field(max_length=80)
    payload: OrchestratorPayload

    def to_proposal(self) -> Proposal:
        payload = self.payload
        return Proposal(
            intent=payload.intent,
            context_level=payload.context_level,
            need_web=payload.need_web,
            web_search_prompt=payload.web_search_prompt,
            scope_need=payload.scope_need,
            scopes_selected=tuple(payload.scopes_selected),
            confidence=self.confidence,
            decision=self.decision,
            notes=self.notes,
        )


@lru_cache(maxsize=64)
def output_model(scopes: tuple[str, ...]) -> type[OrchestratorOutput]:
    """The output contract with scopes_selected as an enum of the existing scope names (none:
    an empty list), so the model cannot invent a scope and its grammar stays short."""
    item: Any = (
        # Always an "enum" (pydantic writes "const" for one value, which some grammars lack).
        Annotated[Literal[scopes], WithJsonSchema({"type": "string", "enum": list(scopes)})]
        if scopes
        else Annotated[str, Field(max_length=1)]
    )
    payload = create_model(
        "OrchestratorPayload",
        __base__=OrchestratorPayload,
        scopes_selected=(list[item], Field(max_length=min(3, len(scopes)))),
    )
    model: type[OrchestratorOutput] = create_model(
        "OrchestratorOutput", __base__=OrchestratorOutput, payload=(payload, ...)
    )
    return model


class Orchestrator:
    def __init__(
        self,
        *,
        runtime: LLMRuntime,
        prompts: PromptLibrary,
        settings: Settings,
        registry: NodeRegistry,
        catalog: AgentCatalog,
    ) -> None:
        self._runtime = runtime
        self._prompts = prompts
        self._settings = settings
        self._registry = registry
        self._catalog = catalog

    async def decide(self, turn: Turn, ctx: ChatContext, signals: Signals) -> OrchestratorResult:
        proposal, reason, call = await self._propose(turn, ctx, signals)
        result = apply_guardrails(
            proposal,
            ctx=ctx,
            signals=signals,
            catalog=self._catalog,
            user_message=turn.user_message.content,
            min_confidence=self._settings.orchestrator_min_confidence,
            max_scopes=self._settings.docs_max_scopes,
            fallback_reason=reason,
        )
        result.call = call
        log.info(
            "chat.orchestrator.decision",
            intent=result.intent,
            mode=result.mode,
            context_level=result.context_level,
            intent_eligible=result.intent_eligible,
            need_web=result.need_web,
            scope_need=result.scope_need,
            confidence=proposal.confidence if proposal is not None else None,
            fallback=result.fallback_reason,
            rules=result.rules_applied,
        )
        return result

    async def _propose(
        self, turn: Turn, ctx: ChatContext, signals: Signals
    ) -> tuple[Proposal | None, str | None, dict[str, Any]]:
        messages = self.prompt(turn, ctx, signals)
        limit = self._settings.orchestrator_timeout_s
        try:
            # The orchestrator's share of the message's deadline: within it, the runtime splits
            # the time between providers, so a hung primary still leaves time for the fallback.
            # wait_for is only the backstop for a provider that ignores cancellation.
            with message_deadline(limit):
                completion = await asyncio.wait_for(
                    self._runtime.complete(
                        messages,
                        output=output_model(tuple(scope.name for scope in ctx.docs_scopes)),
                        purpose="orchestrator",
                        room_id=turn.room.id,
                        message_id=turn.user_message.id,
                        max_tokens=self._settings.orchestrator_max_tokens,
                        temperature=0.0,
                    ),
                    limit + 1.0,
                )
        except TimeoutError:
            log.warning("chat.orchestrator.fallback", reason="timeout")
            return None, "timeout", {}
        except AllProvidersFailed as exc:
            invalid = bool(exc.attempts) and all(a.outcome == "invalid" for a in exc.attempts)
            reason = "invalid_output" if invalid else "timeout" if exc.timed_out else "llm_error"
            log.warning("chat.orchestrator.fallback", reason=reason, error=str(exc)[:300])
            return None, reason, {"error": str(exc)[:300]}
        except LLMError as exc:
            log.warning("chat.orchestrator.fallback", reason="llm_error", error=str(exc)[:300])
            return None, "llm_error", {"error": str(exc)[:300]}
        call = {
            "provider": completion.provider,
            "model": completion.model,
            "duration_ms": round(completion.duration_ms, 1),
            "attempts": len(completion.attempts),
        }
        if completion.input_cut is not None:
            call["input_cut"] = completion.input_cut.as_meta()
        if not isinstance(completion.data, OrchestratorOutput):
            return None, "invalid_output", call
        return completion.data.to_proposal(), None, call

    def prompt(self, turn: Turn, ctx: ChatContext, signals: Signals) -> list[ChatMessage]:
        status = ctx.user_status
        gates = ctx.gates()
        state = {
            "smalltalk_intro_eligible": gates["smalltalk_intro_eligible"],
            "smalltalk_target_key": gates["smalltalk_target_key"],
            "discovery_forced_and_open": ctx.discovery.active,
            "is_pro": status.is_pro,
            "quota_state": status.state,
            "capabilities": ctx.capabilities.flags,
            "previous_intent": signals.previous_intent,
            "previous_mode": signals.previous_mode,
            "short_reply": signals.short_reply,
            "amabilities": signals.amabilities,
        }
        scopes = "\n".join(
            f"- {scope.name}: {scope.description or '(no description)'}"
            for scope in ctx.docs_scopes
        )
        system = fill(
            self._prompts.text(SYSTEM_PROMPT),
            nodes=self._registry.describe(),
            scopes=scopes or "(none)",
            state=json.dumps(state, ensure_ascii=False),
        )
        lines = []
        for item in ctx.history:
            if item.seq >= turn.user_message.seq:
                continue  # the message to route is sent once, below
            speaker = self._settings.assistant_name if item.role == "assistant" else "User"
            lines.append(f"{speaker}: {' '.join(item.content.split())[:_MESSAGE_CHARS]}")
        conversation = "\n".join(lines) or "(empty)"
        last = " ".join(turn.user_message.content.split())[: _MESSAGE_CHARS * 2]
        user = f"Conversation (oldest first):\n{conversation}\n\nMessage to route:\n{last}"
        return [ChatMessage("system", system), ChatMessage("user", user)]
