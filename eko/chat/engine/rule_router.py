"""Routing by rules, for a model too small to route (issue 34, the lean path).

The bundled 1.5B model picks a sensible intent for about half of `eko bench llm`'s routing
probes and costs a model call (~3 s on two cores) before the reply starts; these rules read
the message's words (intent_words.json, French and English) and cost nothing. What they
propose goes through the same guardrails as a model's proposal (apply_guardrails): the
short-reply continuity, the intro and discovery modes, the capability gates, the context
ceilings. `eko bench routing` compares both on the same probes (a held-out file included).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from eko.chat.engine.decision import Proposal
from eko.guard.utterance import refers_to_user
from eko.text import fold

WORDS_FILE = Path(__file__).with_name("intent_words.json")
# The intents the words decide, in the order they are tried: the first that matches wins.
ORDER = (
    "urgent_request",
    "sensitive_question",
    "action_request",
    "functional_question",
    "deep_work",
    "professional_request",
    "decision_support",
    "motivational_guidance",
)
RULES_CONFIDENCE = 1.0
# Small talk and thanks are recognised in a message of at most this many words.
SOCIAL_MAX_WORDS = 8
# A scope is chosen when the message holds one of its name's or description's words this long.
_SCOPE_WORD_MIN = 4
_WORD = re.compile(r"[a-z0-9]+")


@cache
def _patterns(path: Path = WORDS_FILE) -> dict[str, re.Pattern[str]]:
    words: dict[str, list[str]] = {
        key: value for key, value in json.loads(path.read_text("utf-8")).items() if key[0] != "_"
    }
    return {key: _pattern(values) for key, values in words.items()}


def _pattern(phrases: Sequence[str]) -> re.Pattern[str]:
    """One pattern for whole words or phrases; a word may follow an elision ("j'hesite")."""
    parts = []
    for phrase in phrases:
        folded = fold(phrase)
        stem = folded.removesuffix("*")
        tail = r"[\w'-]*" if folded.endswith("*") else ""
        parts.append(re.escape(stem) + tail)
    return re.compile(r"(?<![\w-])(?:" + "|".join(parts) + r")(?![\w'-])")


def _plain(text: str) -> str:
    return " ".join(fold(text).replace("’", "'").split())


def intent_by_rules(text: str) -> str:
    """The intent the message's words point to (general_question when none)."""
    plain = _plain(text)
    patterns = _patterns()
    for intent in ORDER:
        if patterns[intent].search(plain):
            return intent
    if patterns["decision_options"].search(plain) and patterns["decision_alternatives"].search(
        plain
    ):
        return "decision_support"
    if len(plain.split()) <= SOCIAL_MAX_WORDS:
        # Thanks in a question are a word being asked about ("How do you say thank you in
        # French?"); a greeting may come with one ("Salut ! Quoi de neuf ?").
        if "?" not in text and patterns["amabilities"].search(plain):
            return "amabilities"
        if patterns["small_talk"].search(plain):
            return "small_talk"
    return "general_question"


def propose_by_rules(text: str, *, scopes: Sequence[tuple[str, str]] = ()) -> Proposal:
    """A proposal as the orchestrator's model would make one, from rules. `scopes`: the
    documentation scopes (name, description) the room may search."""
    plain = _plain(text)
    words = set(_WORD.findall(plain))
    chosen = tuple(
        name
        for name, description in scopes
        if words
        & {w for w in _WORD.findall(fold(f"{name} {description}")) if len(w) >= _SCOPE_WORD_MIN}
    )
    need_web = bool(_patterns()["need_web"].search(plain))
    return Proposal(
        intent=intent_by_rules(text),
        context_level="medium" if refers_to_user(text) else "light",
        need_web=need_web,
        web_search_prompt=" ".join(text.split()) if need_web else "",
        scope_need=bool(chosen),
        scopes_selected=chosen,
        confidence=RULES_CONFIDENCE,
        decision="rules",
        notes="routed by rules (small model)",
    )
