"""Which answers may become cache entries (spec: never `<non valide>`, never incomplete ones)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

# The spec's marker for an answer a model or a reviewer flagged as not valid.
INVALID_MARKER = re.compile(r"<\s*non[\s_-]*valide\s*>", re.IGNORECASE)
# What eko.chat.text.cap_answer appends when it cuts an answer short.
CUT_ELLIPSIS = "…"
# Message types that are not a model's answer to the question: never learned.
NOT_LEARNABLE_TYPES = frozenset({"fallback", "paywall", "cached_response"})
MAX_QUESTION_CHARS = 2000
MAX_ANSWER_CHARS = 8000


def answer_refusal(answer: str) -> str | None:
    """Why this answer text can never be cached, or None when it may be."""
    text = answer.strip()
    if not text:
        return "empty_answer"
    if len(text) > MAX_ANSWER_CHARS:
        return "answer_too_long"
    if INVALID_MARKER.search(text):
        return "marked_invalid"
    if text.endswith(CUT_ELLIPSIS):
        return "truncated"
    if text.count("```") % 2:
        return "incomplete"  # an unclosed code block: generation stopped mid-answer
    return None


def question_refusal(question: str) -> str | None:
    text = question.strip()
    if not text:
        return "empty_question"
    if len(text) > MAX_QUESTION_CHARS:
        return "question_too_long"
    if INVALID_MARKER.search(text):
        return "marked_invalid"
    return None


Privacy = Literal["shared", "private", "personal"]
# Personal-context sources that only mean "this room's earlier turns were in the prompt".
# Sources that make an answer fit for its asker only (never shared, but cacheable for them):
# the room's earlier turns, and the user's own locale/timezone settings.
ASKER_ONLY_SOURCES = frozenset({"history", "settings"})


def reply_privacy(meta: Mapping[str, Any]) -> Privacy:
    """Who may be served this answer, from what the writer reported about its prompt.

    - `personal_context: False` -> "shared": everyone talking to the persona;
    - `personal_context: True` because of the room's earlier turns and/or the user's own
      locale/timezone settings only (`personal_context_sources` within ["history",
      "settings"]) -> "private": the asker alone;
    - `personal_context: True` for anything else (facts, profile, memory, or no sources
      given) -> "personal": never cached;
    - not reported (a writer that does not say) -> "private".
    """
    used = meta.get("personal_context")
    if used is False:
        return "shared"
    if used is True:
        sources = meta.get("personal_context_sources")
        if isinstance(sources, list) and sources and set(sources) <= ASKER_ONLY_SOURCES:
            return "private"
        return "personal"
    return "private"


def reply_refusal(*, message_type: str, answer: str, meta: Mapping[str, Any]) -> str | None:
    """Why a stored assistant reply can never be cached, or None when it may be.

    `meta` is the reply's metadata as the writers store it: `truncated` (stopped on max_tokens),
    `fallback` (no model answered), `personal_context` (see reply_privacy).
    """
    if message_type in NOT_LEARNABLE_TYPES:
        return f"not_an_answer:{message_type}"
    if meta.get("fallback"):
        return "fallback"
    if meta.get("truncated"):
        return "truncated"
    if reply_privacy(meta) == "personal":
        return "personal_context"
    return answer_refusal(answer)
