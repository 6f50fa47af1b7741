"""The orchestrator's deterministic rules, one by one (the model only proposes)."""

from __future__ import annotations

from typing import Any

import pytest

from eko.chat.engine.capabilities import load_catalog
from eko.chat.engine.context_loader import ChatContext
from eko.chat.engine.decision import OrchestratorResult, Proposal
from eko.chat.engine.guardrails import apply_guardrails, detect_signals
from eko.chat.engine.profile import DiscoveryGates

from .helpers import ALL_FACTS, make_ctx


def propose(intent: str = "general_question", **fields: Any) -> Proposal:
    fields.setdefault("context_level", "light")
    fields.setdefault("confidence", 0.9)
    fields["scopes_selected"] = tuple(fields.get("scopes_selected", ()))
    return Proposal(intent=intent, **fields)


def decide(
    proposal: Proposal | None, message: str, ctx: ChatContext, reason: str | None = None
) -> OrchestratorResult:
    return apply_guardrails(
        proposal,
        ctx=ctx,
        signals=detect_signals(message, ctx),
        catalog=load_catalog(),
        user_message=message,
        fallback_reason=reason,
    )


KNOWN = make_ctx(facts=ALL_FACTS)  # intro done: the normal mode applies
NEW_USER = make_ctx()  # nothing known, quota left: intro eligible
TASK = "Peux-tu m'aider à préparer ma réunion de demain ?"


# --- 1. confidence and fallback -------------------------------------------------------------


def test_low_confidence_falls_back_to_general_light() -> None:
    result = decide(
        propose(
            "deep_work", confidence=0.79, context_level="max", need_web=True, web_search_prompt="x"
        ),
        TASK,
        KNOWN,
    )
    assert (result.intent, result.context_level, result.need_web) == (
        "general_question",
        "light",
        False,
    )
    assert result.fallback_reason == "low_confidence"
    assert "fallback:low_confidence" in result.rules_applied
    assert result.proposal is not None and result.proposal.intent == "deep_work"  # kept for meta


def test_confidence_at_the_threshold_is_trusted() -> None:
    result = decide(propose("decision_support", confidence=0.8), TASK, KNOWN)
    assert result.intent == "decision_support" and result.fallback_reason is None


@pytest.mark.parametrize("reason", ["invalid_output", "llm_error", "timeout"])
def test_no_usable_output_falls_back(reason: str) -> None:
    result = decide(None, TASK, KNOWN, reason)
    assert (result.intent, result.mode, result.context_level) == (
        "general_question",
        "normal",
        "light",
    )
    assert result.fallback_reason == reason


def test_gates_still_apply_after_a_fallback() -> None:
    result = decide(None, "Salut", NEW_USER, "llm_error")
    assert result.mode == "smalltalk_intro"


# --- 2-5. modes ------------------------------------------------------------------------------


def test_intro_eligible_locks_the_intro() -> None:
    result = decide(propose("general_question"), "Je m'appelle Marie", NEW_USER)
    assert (result.mode, result.intent) == ("smalltalk_intro", "smalltalk_intro")
    assert result.gates["smalltalk_intro_locked"] is True
    assert result.gates["smalltalk_target_key"] == "first_name"
    assert result.smalltalk_target_key == "first_name"


@pytest.mark.parametrize(
    ("used", "limit", "is_pro", "facts", "eligible"),
    [
        (1, 8, False, {}, True),
        (7, 8, False, {}, True),
        (8, 8, False, {}, False),  # quota used up
        (2, 8, True, {}, True),  # not tied to is_pro
        (9, 8, True, {}, False),  # the quota gating wins, even for a pro
        (1, 8, False, ALL_FACTS, False),  # nothing missing
    ],
)
def test_intro_eligibility(
    used: int, limit: int, is_pro: bool, facts: dict[str, Any], eligible: bool
) -> None:
    ctx = make_ctx(used=used, limit=limit, is_pro=is_pro, facts=facts)
    assert ctx.smalltalk_intro_eligible is eligible
    result = decide(propose("small_talk"), "Salut", ctx)
    assert (result.mode == "smalltalk_intro") is eligible


@pytest.mark.parametrize("intent", ["urgent_request", "sensitive_question"])
def test_urgent_and_sensitive_always_break_the_intro(intent: str) -> None:
    result = decide(propose(intent), "aide", NEW_USER)
    assert (result.mode, result.intent) == ("normal", intent)
    assert f"intro_override:{intent}" in result.rules_applied


@pytest.mark.parametrize("intent", ["functional_question", "professional_request"])
def test_functional_and_professional_break_the_intro_only_when_explicit(intent: str) -> None:
    assert decide(propose(intent), "Tu fais quoi exactement ?", NEW_USER).mode == "normal"
    assert decide(propose(intent), "bof les assistants", NEW_USER).mode == "smalltalk_intro"


@pytest.mark.parametrize(
    "intent", ["decision_support", "motivational_guidance", "general_question"]
)
def test_task_intents_break_the_intro_only_for_a_real_task(intent: str) -> None:
    assert decide(propose(intent), TASK, NEW_USER).mode == "normal"
    assert decide(propose(intent), "Quelle heure ?", NEW_USER).mode == "smalltalk_intro"
    assert decide(propose(intent), "J'habite à Lyon", NEW_USER).mode == "smalltalk_intro"


@pytest.mark.parametrize(
    ("intent", "message", "signal"),
    [
        ("amabilities", "Merci beaucoup", "amabilities"),
        ("small_talk", "Coucou", "small_talk"),
    ],
)
def test_social_intents_are_absorbed_by_the_intro(intent: str, message: str, signal: str) -> None:
    result = decide(propose(intent), message, NEW_USER)
    assert result.intent == "smalltalk_intro"
    assert getattr(result.signals, signal) is True
    assert f"absorbed:{intent}" in result.rules_applied


def test_short_reply_continues_the_previous_intent() -> None:
    ctx = make_ctx(facts=ALL_FACTS, last_intent="decision_support", last_mode="normal")
    result = decide(propose("small_talk"), "ok", ctx)
    assert result.intent == "decision_support"
    assert result.signals.short_reply is True
    assert "short_reply_continuity" in result.rules_applied


@pytest.mark.parametrize("reply", ["oui", "non", "vas-y", "nickel", "Ok !", "d'accord"])
def test_short_reply_continues_the_intro(reply: str) -> None:
    ctx = make_ctx(last_intent="smalltalk_intro", last_mode="smalltalk_intro")
    result = decide(propose("general_question"), reply, ctx)
    assert result.mode == "smalltalk_intro"


def test_short_reply_does_not_hide_an_urgency() -> None:
    ctx = make_ctx(facts=ALL_FACTS, last_intent="small_talk", last_mode="normal")
    assert decide(propose("urgent_request"), "non", ctx).intent == "urgent_request"


FORCED = DiscoveryGates(
    forced=True, status="in_progress", transition_window="J+3", transition_reason="trial"
)


def test_forced_discovery_overrides_everything_but_urgent_and_sensitive() -> None:
    ctx = make_ctx(facts=ALL_FACTS, discovery=FORCED)
    for intent in ("general_question", "deep_work", "amabilities", "small_talk"):
        result = decide(propose(intent), TASK, ctx)
        assert (result.mode, result.intent) == ("discovery", "discovery"), intent
    assert decide(propose("amabilities"), "merci", ctx).signals.amabilities is True
    for intent in ("urgent_request", "sensitive_question"):
        assert decide(propose(intent), TASK, ctx).mode == "normal"
    assert decide(propose(), TASK, ctx).gates["transition_window"] == "J+3"


def test_discovery_wins_over_the_intro_and_ends_when_complete() -> None:
    assert decide(propose(), "salut", make_ctx(discovery=FORCED)).mode == "discovery"
    done = DiscoveryGates(forced=True, status="complete")
    assert decide(propose(), TASK, make_ctx(facts=ALL_FACTS, discovery=done)).mode == "normal"


def test_modes_the_model_cannot_grant() -> None:
    assert decide(propose("smalltalk_intro"), "salut", KNOWN).intent == "small_talk"
    assert decide(propose("discovery"), TASK, KNOWN).intent == "general_question"


# --- 6. capability gating --------------------------------------------------------------------


def test_action_without_agent_keeps_the_intent_but_is_not_eligible() -> None:
    result = decide(propose("action_request"), "Réserve-moi un resto ce soir", KNOWN)
    assert result.intent == "action_request"
    assert result.intent_eligible is False
    assert result.intent_block_reason == "no_agent"
    assert result.gates["blocked_reason"] == "no_agent"


def test_agent_without_connected_service_is_not_enough() -> None:
    ctx = make_ctx(facts=ALL_FACTS, is_pro=True, agents=["ultimate"])
    result = decide(propose("action_request"), "Envoie un mail à Paul", ctx)
    assert result.intent_eligible is False
    assert result.intent_block_reason == "service_not_connected"
    assert result.gates["missing_services"] == ["calendar", "email"]
    ctx = make_ctx(facts=ALL_FACTS, is_pro=True, agents=["ultimate"], services=["email"])
    result = decide(propose("action_request"), "Envoie un mail à Paul", ctx)
    assert result.intent_eligible is True and result.intent_block_reason is None


# --- 7. context level ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("is_pro", "agents", "proposed", "final"),
    [
        (False, [], "max", "light"),
        (False, ["medical_assistant"], "medium", "light"),
        (True, [], "medium", "light"),
        (True, ["personal_assistant"], "max", "medium"),
        (True, ["personal_assistant"], "light", "light"),
        (True, ["medical_assistant"], "max", "max"),
    ],
)
def test_context_level_is_forced_by_plan_and_agents(
    is_pro: bool, agents: list[str], proposed: str, final: str
) -> None:
    ctx = make_ctx(facts=ALL_FACTS, is_pro=is_pro, agents=agents)
    assert decide(propose("deep_work", context_level=proposed), TASK, ctx).context_level == final


def test_intro_and_trivial_intents_are_light_even_for_pro_mode() -> None:
    pro = make_ctx(is_pro=True, agents=["medical_assistant"])
    assert decide(propose("small_talk", context_level="max"), "salut", pro).context_level == "light"
    pro_known = make_ctx(facts=ALL_FACTS, is_pro=True, agents=["medical_assistant"])
    result = decide(propose("amabilities", context_level="max"), "merci", pro_known)
    assert result.context_level == "light"


# --- 8. web and docs flags -------------------------------------------------------------------


def test_need_web_gets_a_query_and_is_dropped_for_social_turns() -> None:
    result = decide(propose(need_web=True), "Quel temps fera-t-il demain à Lyon ?", KNOWN)
    assert result.need_web and result.web_search_prompt == "Quel temps fera-t-il demain à Lyon ?"
    social = decide(propose("amabilities", need_web=True, web_search_prompt="x"), "merci", KNOWN)
    assert social.need_web is False and social.web_search_prompt == ""


def test_scopes_are_filtered_to_known_ones() -> None:
    ctx = make_ctx(facts=ALL_FACTS, scopes=["product", "billing"])
    result = decide(
        propose(scope_need=True, scopes_selected=["product", "nope", "billing"]), TASK, ctx
    )
    assert result.scopes_selected == ("product", "billing") and result.scope_need
    assert "scopes_filtered" in result.rules_applied
    none = decide(propose(scope_need=True, scopes_selected=["nope"]), TASK, ctx)
    assert none.scope_need is False and none.scopes_selected == ()
    unasked = decide(propose(scope_need=False, scopes_selected=["product"]), TASK, ctx)
    assert unasked.scope_need is False


def test_signals_are_computed_before_the_model() -> None:
    ctx = make_ctx(last_intent="general_question", last_mode="normal")
    signals = detect_signals("Merci, bonne nuit !", ctx)
    assert signals.amabilities and not signals.task_like
    assert signals.previous_intent == "general_question"
    assert detect_signals(TASK, ctx).task_like
    assert detect_signals("nickel", ctx).short_reply
    assert not detect_signals("nickel, et pour demain on fait quoi ?", ctx).short_reply
