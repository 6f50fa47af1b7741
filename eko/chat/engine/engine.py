"""ChatEngine: the seed's chat engine as a pipeline Writer.

    context loader (minimum block) -> signals -> orchestrator (one model call + guardrails)
    -> intro answer captured as a fact -> stable plan from the registry -> executor (DAG,
    concurrent) -> answer-only lock (flags stripped, sources block, capped) -> Draft

Whatever fails, `write` returns a safe, non-empty Draft; failures are in metadata and logs.
The orchestration (intent, mode, gates, capabilities, signals, plan, node outcomes, docs/web
usage) is stored in the assistant message's metadata, with `intent` and `personal_context`
at the top level for the stages that read them (memory guard).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import structlog

from eko.chat.engine.answer_lock import compose_answer
from eko.chat.engine.context_loader import ChatContext, ContextLoader, FactItem
from eko.chat.engine.decision import OrchestratorResult
from eko.chat.engine.executor import PlanExecutor
from eko.chat.engine.guardrails import detect_signals
from eko.chat.engine.intro import parse_intro_answer
from eko.chat.engine.nodes import docs_chunks as node_s
from eko.chat.engine.nodes import quota as node_b
from eko.chat.engine.nodes import web_search as node_c
from eko.chat.engine.orchestrator import Orchestrator
from eko.chat.engine.plan import Plan, build_plan
from eko.chat.engine.profile import DiscoveryGates, update_settings
from eko.chat.engine.registry import NodeContext, NodeRegistry, NodeResult
from eko.chat.engine.writer import WrittenAnswer
from eko.chat.pipeline import Draft, Turn
from eko.chat.reply import fallback_draft, provenance
from eko.chat.reply_meta import ReplyMeta
from eko.chat.websearch.base import WebSearchResult
from eko.config import Settings
from eko.llm.caller_format import CallerFormat
from eko.prompts.library import PromptLibrary
from eko.store import chat_profile
from eko.store.db import Database
from eko.store.outage import database_busy_or_unavailable

log = structlog.get_logger("eko.chat")

_WRITER_FAILURES = {
    "timeout": "writer_timeout",
    "error": "writer_error",
    "refused": "writer_refused",
}


class ChatEngine:
    """The Writer of the chat engine."""

    def __init__(
        self,
        *,
        database: Database,
        settings: Settings,
        prompts: PromptLibrary,
        loader: ContextLoader,
        orchestrator: Orchestrator,
        registry: NodeRegistry,
    ) -> None:
        self._database = database
        self._settings = settings
        self._prompts = prompts
        self._loader = loader
        self._orchestrator = orchestrator
        self.registry = registry
        self._executor = PlanExecutor(registry)

    async def write(self, turn: Turn) -> Draft:
        started = time.perf_counter()
        try:
            return await self._write(turn, started)
        except Exception as exc:
            if database_busy_or_unavailable(exc):
                # Not an apology stored in place of an answer: the message stays owed and is
                # answered when the database serves again (eko/chat/recovery.py).
                raise
            # The answer-only lock, last line: a bug still answers.
            log.exception("chat.engine.failed", message_id=turn.user_message.id)
            draft = fallback_draft(
                self._prompts, "engine_error", error=f"{type(exc).__name__}: {exc}"[:300]
            )
            draft.meta.set(intent=None, mode=None, personal_context=False, flags={})
            return draft

    async def _write(self, turn: Turn, started: float) -> Draft:
        ctx = await self._loader.load(turn)
        self._log_summary(turn, ctx)
        signals = detect_signals(turn.user_message.content, ctx)
        decision = await self._orchestrator.decide(turn, ctx, signals)
        # Profile writes (intro fact, counters, discovery) must not cost the user the answer.
        learned: list[dict[str, Any]] = []
        try:
            learned = await self._capture_intro_answer(turn, ctx, decision)
            await self._update_modes(ctx, decision)
        except Exception:
            log.warning("chat.profile.update_failed", stage="before_plan", exc_info=True)
            decision.rules_applied.append("profile_update_failed")
        plan = build_plan(decision, self.registry)
        results = await self._executor.run(plan, NodeContext(turn=turn, ctx=ctx, decision=decision))
        draft = self._draft(turn, ctx, decision, plan, results, learned)
        try:
            await self._apply_flags(ctx, decision, draft.meta.flags or {})
        except Exception:
            log.warning("chat.profile.update_failed", stage="flags", exc_info=True)
        draft.meta.engine = {
            "duration_ms": round((time.perf_counter() - started) * 1000.0, 2),
            "node_ids": plan.ids,
        }
        return draft

    # --- before the plan ---

    async def _capture_intro_answer(
        self, turn: Turn, ctx: ChatContext, decision: OrchestratorResult
    ) -> list[dict[str, Any]]:
        """During the intro, the user's answer to the key the assistant asked becomes a fact."""
        if decision.mode != "smalltalk_intro" or ctx.last_mode != "smalltalk_intro":
            return []
        key = ctx.last_target_key
        if key is None or key not in ctx.missing_required:
            return []
        answer = parse_intro_answer(key, turn.user_message.content)
        if answer is None:
            return []
        async with self._database.session() as session:
            row = await chat_profile.upsert_fact(
                session,
                user_id=ctx.user_id,
                fact_key=answer.fact_key,
                value=answer.value,
                value_type=answer.value_type,
                category="profile",
                confidence=answer.confidence,
                source_ref=f"message:{turn.user_message.id}",
                notes="smalltalk_intro answer",
            )
            fact = FactItem.of(row)
        ctx.with_fact(fact)
        missing = ctx.missing_required
        decision.gates["missing_required"] = missing
        decision.gates["smalltalk_target_key"] = missing[0] if missing else None
        decision.rules_applied.append(f"intro_fact_captured:{key}")
        log.info("chat.intro.fact_captured", fact_key=key, remaining=len(missing))
        return [{"fact_key": fact.fact_key, "value": fact.value}]

    async def _update_modes(self, ctx: ChatContext, decision: OrchestratorResult) -> None:
        if decision.mode == "smalltalk_intro":
            await self._save_settings(
                ctx,
                intro_smalltalk_turns=int(ctx.settings.get("intro_smalltalk_turns") or 0) + 1,
                intro_smalltalk_done=not ctx.missing_required,
            )
        elif ctx.settings.get("intro_smalltalk_done") is False and not ctx.missing_required:
            await self._save_settings(ctx, intro_smalltalk_done=True)
        if decision.mode == "discovery" and ctx.discovery.status == "not_started":
            gates = DiscoveryGates(
                forced=ctx.discovery.forced,
                status="in_progress",
                transition_window=ctx.discovery.transition_window,
                transition_reason=ctx.discovery.transition_reason,
            )
            await self._save_settings(ctx, discovery=gates.to_settings())

    async def _save_settings(self, ctx: ChatContext, **changes: Any) -> None:
        async with self._database.session() as session:
            await update_settings(session, user_id=ctx.user_id, **changes)

    # --- after the plan: the answer-only lock ---

    def _draft(
        self,
        turn: Turn,
        ctx: ChatContext,
        decision: OrchestratorResult,
        plan: Plan,
        results: Mapping[str, NodeResult],
        learned: list[dict[str, Any]],
    ) -> Draft:
        final_id = plan.nodes[-1].id
        final = results.get(final_id)
        web = _value_of(results, node_c.NODE_ID, WebSearchResult)
        answer = _value_of(results, final_id, WrittenAnswer)
        flags: dict[str, bool] = {}
        fallback: str | None = None
        content = ""
        caller = CallerFormat.from_meta(turn.user_message.meta)
        tool_calls = list(answer.completion.tool_calls) if answer is not None else []
        if answer is None:
            fallback = _writer_failure(final)
        elif caller is not None:
            # JSON or tool calls, checked by the runtime: the prose shaping (flags, sources,
            # length cap) would break them.
            content = answer.text
            if not content and not tool_calls:
                fallback = "empty_answer"
        else:
            content, flags = compose_answer(
                answer.text, web=web, max_chars=self._settings.chat_max_answer_chars
            )
            if not content:
                fallback = "empty_answer"
        meta = ReplyMeta()
        if answer is not None:
            meta.set(**provenance(answer.completion))
        personal_sources = self._personal_sources(turn, ctx, results) if fallback is None else []
        meta.set(
            intent=decision.intent,
            mode=decision.mode,
            personal_context=bool(personal_sources),
            personal_context_sources=personal_sources,
            smalltalk_target_key=decision.smalltalk_target_key,
            flags=flags,
            orchestrator=decision.to_meta(),
            plan=plan.to_meta(),
            nodes={node_id: result.to_meta() for node_id, result in results.items()},
            docs=_docs_meta(decision, results),
            web=_web_meta(decision, results),
            quota=_data_of(results, node_b.NODE_ID),
            learned_facts=learned,
        )
        if caller is not None:
            meta.caller_format = caller.kind
        if answer is not None and answer.grounding is not None:
            meta.grounding = answer.grounding
        if answer is not None and answer.storage_claims:
            meta.storage_claims_removed = list(answer.storage_claims)
        if fallback is not None:
            error = final.error if final is not None else "writer node missing"
            log.warning("chat.answer.fallback", reason=fallback, error=error)
            meta.set(
                fallback=fallback, error=error, fallback_cause=_fallback_cause(fallback, final)
            )
            draft = fallback_draft(self._prompts, fallback)
            draft.meta = meta
            return draft
        return Draft(content=content, meta=meta, tool_calls=tool_calls or None)

    def _personal_sources(
        self, turn: Turn, ctx: ChatContext, results: Mapping[str, NodeResult]
    ) -> list[str]:
        """What private data about the user the writer's prompt held (see docs/chat-engine.md)."""
        sources: list[str] = []
        for result in results.values():
            section = result.output.section if result.ok and result.output else None
            if section is not None and section.personal:
                sources += [s for s in section.personal_sources if s not in sources]
        if any(item.seq < turn.user_message.seq for item in ctx.history):
            sources.append("history")
        if ctx.settings.get("locale_main") or ctx.settings.get("timezone"):
            sources.append("settings")
        return sources

    async def _apply_flags(
        self, ctx: ChatContext, decision: OrchestratorResult, flags: Mapping[str, bool]
    ) -> None:
        """Discovery ends on the writer's aha_moment (or onboarding_abort) flag."""
        if decision.mode != "discovery":
            return
        reason = next(
            (name for name in ("aha_moment", "onboarding_abort") if flags.get(name)), None
        )
        if reason is None:
            return
        gates = DiscoveryGates(
            forced=ctx.discovery.forced,
            status="complete",
            transition_window=ctx.discovery.transition_window,
            transition_reason=reason,
        )
        await self._save_settings(ctx, discovery=gates.to_settings())
        log.info("chat.discovery.complete", reason=reason)

    def _log_summary(self, turn: Turn, ctx: ChatContext) -> None:
        log.debug(
            "chat.ctx.summary",
            message_id=turn.user_message.id,
            history_count=len(ctx.history),
            facts_store_count=len(ctx.facts),
            facts_keys_sample=[fact.fact_key for fact in ctx.facts[:5]],
            missing_required_count=len(ctx.missing_required),
            smalltalk_intro_eligible=ctx.smalltalk_intro_eligible,
            discovery_active=ctx.discovery.active,
            quota_state=ctx.user_status.state,
            is_pro=ctx.user_status.is_pro,
            agents=list(ctx.capabilities.active_agents),
            services=list(ctx.capabilities.connected_services),
            docs_scopes_count=len(ctx.docs_scopes),
            docs_scopes=[scope.name for scope in ctx.docs_scopes[:10]],
        )


def _value_of(results: Mapping[str, NodeResult], node_id: str, kind: type[Any]) -> Any:
    result = results.get(node_id)
    if result is None or not result.ok or result.output is None:
        return None
    return result.output.value if isinstance(result.output.value, kind) else None


def _data_of(results: Mapping[str, NodeResult], node_id: str) -> dict[str, Any] | None:
    result = results.get(node_id)
    if result is None or result.output is None:
        return None
    return dict(result.output.data)


def _writer_failure(final: NodeResult | None) -> str:
    if final is None:
        return "writer_missing"
    if final.output is not None and final.output.data.get("fallback"):
        return str(final.output.data["fallback"])
    return _WRITER_FAILURES.get(final.outcome, "writer_failed")


def _fallback_cause(fallback: str, final: NodeResult | None) -> str:
    """Why the writer gave no answer, for a person: the model's failure (busy, timeout,
    unreachable), the writer node out of time, or any other error."""
    if final is not None and final.output is not None and final.output.data.get("cause"):
        return str(final.output.data["cause"])
    return "timeout" if fallback == "writer_timeout" else "error"


def _docs_meta(decision: OrchestratorResult, results: Mapping[str, NodeResult]) -> dict[str, Any]:
    result = results.get(node_s.NODE_ID)
    data = dict(result.output.data) if result is not None and result.output is not None else {}
    return {
        "scope_need": decision.scope_need,
        "scopes": list(decision.scopes_selected),
        "used": result is not None and result.ok,
        "outcome": result.outcome if result is not None else "not_planned",
        "chunks": data.get("chunks", []),
    }


def _web_meta(decision: OrchestratorResult, results: Mapping[str, NodeResult]) -> dict[str, Any]:
    result = results.get(node_c.NODE_ID)
    meta: dict[str, Any] = {
        "needed": decision.need_web,
        "query": decision.web_search_prompt or None,
        "used": result is not None and result.ok,
        "outcome": result.outcome if result is not None else "not_planned",
    }
    if result is not None and result.output is not None:
        if result.output.skipped_reason:
            meta["skipped_reason"] = result.output.skipped_reason
        meta["sources"] = result.output.data.get("sources", [])
    if result is not None and result.error:
        meta["error"] = result.error
    return meta
