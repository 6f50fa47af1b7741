"""Deterministic rules around the orchestrator's one model call.

Before the model (`detect_signals`): short reply, amabilities, small talk, explicit request,
continuity with the previous turn. Eligibility and capabilities come from the context loader.

After the model (`apply_guardrails`), in this order:
1. confidence < min (0.8), invalid output or model failure -> the deterministic fallback
   (general intent, light context); the reason is recorded;
2. a short reply ("ok", "oui", "non", "vas-y", "nickel") continues the previous intent / mode;
3. discovery forced and not complete overrides every intent but urgent_request and
   sensitive_question (mode discovery);
4. otherwise, smalltalk intro eligible -> mode smalltalk_intro unless the intent overrides it:
   urgent / sensitive always; functional / professional when explicit; decision_support,
   motivational_guidance, general_question (and the other task intents) when the user really
   goes into a task;
5. amabilities and small_talk during the intro or discovery are absorbed (signals flags);
6. capability gating keeps the natural intent and sets intent_eligible / intent_block_reason;
7. the context level is forced (intro -> light, trivial -> light, not pro -> light, pro ->
   medium with a personal agent, max with a pro-mode agent);
8. need_web and docs scopes are made coherent (a query to search, known scopes, hard caps);
   a room with attachments has its own scope searched on every turn, first, within the cap.
Every rule that changed something is listed in `rules_applied`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace

from eko.chat.engine.capabilities import AgentCatalog
from eko.chat.engine.context_loader import ChatContext
from eko.chat.engine.decision import (
    FALLBACK_PROPOSAL,
    INTENTS,
    OrchestratorResult,
    Proposal,
    Signals,
    level_rank,
    lowest_level,
)

# The seed's overrides of the smalltalk intro, by priority tier.
INTRO_OVERRIDES_ALWAYS = frozenset({"urgent_request", "sensitive_question"})
INTRO_OVERRIDES_IF_EXPLICIT = frozenset({"functional_question", "professional_request"})
INTRO_OVERRIDES_IF_TASK = frozenset(
    {"decision_support", "motivational_guidance", "general_question", "action_request", "deep_work"}
)
DISCOVERY_OVERRIDES = INTRO_OVERRIDES_ALWAYS
SOCIAL_INTENTS = frozenset({"amabilities", "small_talk"})

SHORT_REPLIES = frozenset(
    {
        "ok",
        "okay",
        "oui",
        "non",
        "vas-y",
        "vas y",
        "nickel",
        "d'accord",
        "dac",
        "ouais",
        "yes",
        "no",
        "yep",
        "nope",
        "go",
        "parfait",
        "ça marche",
        "ca marche",
        "carrément",
    }
)
_AMABILITIES = (
    "merci",
    "thanks",
    "thank you",
    "thx",
    "bonne nuit",
    "bonne journée",
    "bonne journee",
    "bonne soirée",
    "bonne soiree",
    "good night",
    "have a nice day",
    "à demain",
    "a demain",
    "à plus",
    "see you",
    "bisous",
    "c'est gentil",
    "trop sympa",
)
_GREETINGS = (
    "salut",
    "bonjour",
    "bonsoir",
    "coucou",
    "hello",
    "hi",
    "hey",
    "ça va",
    "ca va",
    "how are you",
    "quoi de neuf",
)
_REQUEST_STARTS = (
    "peux-tu",
    "peux tu",
    "pourrais-tu",
    "pourrais tu",
    "tu peux",
    "tu pourrais",
    "pouvez-vous",
    "pouvez vous",
    "aide-moi",
    "aide moi",
    "aidez-moi",
    "explique",
    "expliquez",
    "comment",
    "pourquoi",
    "quel",
    "quelle",
    "quels",
    "quelles",
    "qu'est-ce",
    "combien",
    "où",
    "quand",
    "est-ce que",
    "fais",
    "fait",
    "donne",
    "trouve",
    "réserve",
    "reserve",
    "envoie",
    "écris",
    "ecris",
    "rédige",
    "prépare",
    "prepare",
    "organise",
    "planifie",
    "rappelle",
    "cherche",
    "calcule",
    "résume",
    "resume",
    "traduis",
    "j'ai besoin",
    "il me faut",
    "can you",
    "could you",
    "would you",
    "please",
    "help me",
    "explain",
    "how",
    "why",
    "what",
    "which",
    "when",
    "where",
    "who",
    "book",
    "send",
    "write",
    "find",
    "give",
    "make",
    "plan",
    "draft",
    "summarize",
    "translate",
    "i need",
)
# An explicit request this long (in words) is a real task, not an aside during the intro.
TASK_MIN_WORDS = 4
_SOCIAL_MAX_WORDS = 8
_WEB_PROMPT_MAX_CHARS = 200
_PUNCT = re.compile(r"[^\w\s'’-]+")


def normalize(text: str) -> str:
    folded = unicodedata.normalize("NFC", text).lower().replace("’", "'")
    return " ".join(_PUNCT.sub(" ", folded).split())


def _contains_phrase(text: str, phrases: tuple[str, ...]) -> bool:
    padded = f" {text} "
    return any(f" {phrase} " in padded for phrase in phrases)


def detect_signals(text: str, ctx: ChatContext) -> Signals:
    plain = normalize(text)
    words = plain.split()
    short_reply = bool(words) and (
        plain in SHORT_REPLIES or (len(words) <= 2 and all(word in SHORT_REPLIES for word in words))
    )
    social = len(words) <= _SOCIAL_MAX_WORDS
    explicit = "?" in text or any(
        plain == start or plain.startswith(start + " ") for start in _REQUEST_STARTS
    )
    return Signals(
        short_reply=short_reply,
        amabilities=social and _contains_phrase(plain, _AMABILITIES),
        small_talk=social and not explicit and _contains_phrase(plain, _GREETINGS),
        explicit_request=explicit,
        task_like=explicit and len(words) >= TASK_MIN_WORDS,
        previous_intent=ctx.last_intent,
        previous_mode=ctx.last_mode,
    )


def apply_guardrails(
    proposal: Proposal | None,
    *,
    ctx: ChatContext,
    signals: Signals,
    catalog: AgentCatalog,
    user_message: str,
    min_confidence: float = 0.8,
    max_scopes: int = 3,
    fallback_reason: str | None = None,
) -> OrchestratorResult:
    rules: list[str] = []

    # 1. Trust the model only at min_confidence or above.
    if proposal is None:
        fallback_reason = fallback_reason or "no_output"
        used = FALLBACK_PROPOSAL
    elif proposal.confidence < min_confidence:
        fallback_reason = "low_confidence"
        used = FALLBACK_PROPOSAL
    else:
        fallback_reason = None
        used = proposal
    if fallback_reason is not None:
        rules.append(f"fallback:{fallback_reason}")
    intent = used.intent if used.intent in INTENTS else "general_question"
    signals = replace(
        signals,
        amabilities=signals.amabilities or intent == "amabilities",
        small_talk=signals.small_talk or intent == "small_talk",
    )

    # 2. A short reply continues the previous turn's intent (and so its mode, below).
    if (
        signals.short_reply
        and signals.previous_intent in INTENTS
        and intent not in INTRO_OVERRIDES_ALWAYS
        and intent != signals.previous_intent
    ):
        intent = str(signals.previous_intent)
        rules.append("short_reply_continuity")

    # 3-5. Modes: discovery (forced, not complete) first, then the smalltalk intro.
    mode = "normal"
    if ctx.discovery.active:
        if intent in DISCOVERY_OVERRIDES:
            rules.append(f"discovery_override:{intent}")
        else:
            if intent in SOCIAL_INTENTS:
                rules.append(f"absorbed:{intent}")
            mode, intent = "discovery", "discovery"
            rules.append("discovery_forced")
    elif ctx.smalltalk_intro_eligible:
        overrides = (
            intent in INTRO_OVERRIDES_ALWAYS
            or (intent in INTRO_OVERRIDES_IF_EXPLICIT and signals.explicit_request)
            or (intent in INTRO_OVERRIDES_IF_TASK and signals.task_like)
        )
        if overrides:
            rules.append(f"intro_override:{intent}")
        else:
            if intent in SOCIAL_INTENTS:
                rules.append(f"absorbed:{intent}")
            mode, intent = "smalltalk_intro", "smalltalk_intro"
            rules.append("smalltalk_intro_lock")
    elif intent == "smalltalk_intro":
        intent = "small_talk"
        rules.append("intro_not_eligible")
    if intent == "discovery" and mode != "discovery":
        intent = "general_question"
        rules.append("discovery_not_forced")

    # 6. Capability gating: the intent stays, its eligibility is computed.
    eligible, block_reason = True, None
    missing_services: tuple[str, ...] = ()
    capability = catalog.intent_requires.get(intent)
    if capability is not None:
        status = ctx.capabilities.statuses.get(capability)
        if status is None or not status.granted:
            eligible = False
            block_reason = status.reason if status is not None else "no_agent"
            missing_services = status.missing_services if status is not None else ()
            rules.append(f"capability_blocked:{capability}:{block_reason}")

    # 7. Context level: the model proposes, the backend forces.
    level = used.context_level
    forced: list[tuple[str, str]] = []
    if mode == "smalltalk_intro":
        forced.append(("light", "intro_forces_light"))
    if intent in SOCIAL_INTENTS:
        forced.append(("light", "trivial_intent_light"))
    if not ctx.user_status.is_pro:
        forced.append(("light", "not_pro_forces_light"))
    elif ctx.capabilities.has_tier("pro_mode"):
        forced.append(("max", "pro_mode_allows_max"))
    elif ctx.capabilities.has_tier("personal"):
        forced.append(("medium", "personal_agent_allows_medium"))
    else:
        forced.append(("light", "pro_without_agent_light"))
    for ceiling, rule in forced:
        if level_rank(level) > level_rank(ceiling):
            level = lowest_level(level, ceiling)
            rules.append(rule)

    # 8. External lookups: coherent flags, known scopes, hard caps.
    social_turn = mode == "smalltalk_intro" or intent in SOCIAL_INTENTS
    need_web = used.need_web and not social_turn
    if used.need_web and not need_web:
        rules.append("web_not_for_social")
    web_prompt = used.web_search_prompt.strip()[:_WEB_PROMPT_MAX_CHARS]
    if need_web and not web_prompt:
        web_prompt = " ".join(user_message.split())[:_WEB_PROMPT_MAX_CHARS]
        rules.append("web_prompt_from_message")
    if not need_web:
        web_prompt = ""
    known_scopes = {scope.name for scope in ctx.docs_scopes}
    scopes: list[str] = []
    if used.scope_need and not social_turn:
        for name in used.scopes_selected:
            if name in known_scopes and name not in scopes:
                scopes.append(name)
        if len(scopes) != len(used.scopes_selected):
            rules.append("scopes_filtered")
        if len(scopes) > max_scopes:
            scopes = scopes[:max_scopes]
            rules.append("scopes_capped")
        if not scopes:
            rules.append("scope_need_without_known_scope")
    elif used.scope_need:
        rules.append("docs_not_for_social")
    if ctx.room_scope is not None:
        # The room's files: searched whatever the model chose (a small model cannot be relied
        # on to ask), first, in one of the max_scopes places.
        scopes = [ctx.room_scope.name, *scopes[: max(0, max_scopes - 1)]]
        rules.append("room_attachments")

    gates = ctx.gates()
    gates.update(
        {
            "smalltalk_intro_locked": mode == "smalltalk_intro",
            "discovery_active": ctx.discovery.active,
            "blocked_reason": block_reason,
            "missing_services": list(missing_services),
        }
    )
    if mode != "smalltalk_intro":
        gates["smalltalk_target_key"] = None
    return OrchestratorResult(
        intent=intent,
        mode=mode,
        intent_eligible=eligible,
        intent_block_reason=block_reason,
        context_level=level,
        need_web=need_web,
        web_search_prompt=web_prompt,
        scope_need=bool(scopes),
        scopes_selected=tuple(scopes),
        gates=gates,
        capabilities=ctx.capabilities.flags,
        signals=signals,
        proposal=proposal,
        fallback_reason=fallback_reason,
        rules_applied=rules,
    )
