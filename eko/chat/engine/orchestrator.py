"""The orchestrator: deterministic state -> ONE model call -> deterministic guardrails.

With a small local model (EKO_ORCHESTRATOR_ROUTER, "auto"), rules propose instead of the
model call (rule_router.py); the same guardrails decide.

The model answers under one of two output contracts (orchestrator_contract.py): the seed's
full one for a capable model, a compact one for the bundled local model (a fraction of the
generated tokens; `EKO_ORCHESTRATOR_CONTRACT`). Its answer is a proposal:
`guardrails.apply_guardrails` decides. Any failure (timeout, every provider down, invalid
JSON, low confidence) ends in the deterministic fallback, and the reason is recorded.
"""

from __future__ import annotations

import json
from typing import Any

import structlog
from pydantic import BaseModel

from eko.chat.engine.capabilities import AgentCatalog
from eko.chat.engine.context_loader import ChatContext
from eko.chat.engine.decision import OrchestratorResult, Proposal, Signals
from eko.chat.engine.guardrails import apply_guardrails
from eko.chat.engine.orchestrator_contract import compact_output_model, output_model, to_proposal
from eko.chat.engine.registry import NodeRegistry
from eko.chat.engine.rule_router import propose_by_rules
from eko.chat.pipeline import Turn
from eko.config import Settings
from eko.llm.deadline import message_deadline, time_limit
from eko.llm.errors import AllProvidersFailed, LLMError
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage
from eko.prompts.library import PromptLibrary
from eko.prompts.templates import fill

log = structlog.get_logger("eko.chat")

SYSTEM_PROMPT = "orchestrator/system.md"
COMPACT_SYSTEM_PROMPT = "orchestrator/system_compact.md"
# Per message of the conversation shown to the orchestrator (it needs the gist, not the text).
_MESSAGE_CHARS = 300


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
        if self.by_rules:
            scopes = [(scope.name, scope.description or "") for scope in ctx.docs_scopes]
            proposal: Proposal | None = propose_by_rules(turn.user_message.content, scopes=scopes)
            reason: str | None = None
            call: dict[str, Any] = {"router": "rules"}
        else:
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
            # The outer limit is only the backstop for a provider that ignores cancellation;
            # both stop counting while the call waits in the local model's line.
            with message_deadline(limit):
                async with time_limit(limit + 1.0):
                    completion = await self._runtime.complete(
                        messages,
                        output=self.output(ctx),
                        purpose="orchestrator",
                        room_id=turn.room.id,
                        message_id=turn.user_message.id,
                        max_tokens=self._settings.orchestrator_max_tokens,
                        temperature=0.0,
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
        proposal = to_proposal(completion.data) if completion.data is not None else None
        if proposal is None:
            return None, "invalid_output", call
        call["contract"] = "compact" if self.compact else "full"
        return proposal, None, call

    @property
    def by_rules(self) -> bool:
        """Whether routes come from rules (rule_router.py) instead of a model call."""
        return self._settings.routes_by_rules(primary_is_small=self._primary_is_small)

    @property
    def _primary_is_small(self) -> bool:
        return self._runtime.primary_is_small

    @property
    def compact(self) -> bool:
        """Whether this orchestrator asks for the compact contract (a small local model)."""
        return self._settings.orchestrator_compact(primary_is_small=self._primary_is_small)

    def output(self, ctx: ChatContext) -> type[BaseModel]:
        """The output model the model answers under for this turn."""
        scopes = tuple(scope.name for scope in ctx.docs_scopes)
        if self.compact:
            return compact_output_model(scopes, web=self._settings.web_search_provider != "off")
        return output_model(scopes)

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
        if self.compact:
            # Only what the compact prompt's rules read: every token here is read per turn.
            compact_state = {
                key: state[key] for key in ("smalltalk_intro_eligible", "previous_intent")
            }
            if signals.short_reply:
                compact_state["short_reply"] = True
            system = fill(
                self._prompts.text(COMPACT_SYSTEM_PROMPT),
                scopes=scopes or "(none)",
                state=json.dumps(compact_state, ensure_ascii=False),
            )
        else:
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
