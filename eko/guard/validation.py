"""Which answers may become cache entries, and which questions may be answered from the cache.

Spec: never `<non valide>`, never incomplete answers. Also: only questions (or requests to be
answered) become entries or get a cached answer, never a statement, a greeting or a thanks; and
an answer that depends on the user (the question is about them, or the answer repeats one of
their stored facts) is never learned. Every refusal is a stable code (`refusal_text` gives the
sentence a staff page shows).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from eko.guard.utterance import is_question, refers_to_user

__all__ = [
    "ASKER_ONLY_SOURCES",
    "MAX_ANSWER_CHARS",
    "MAX_QUESTION_CHARS",
    "REFUSALS",
    "Privacy",
    "answer_refusal",
    "is_question",
    "lookup_refusal",
    "question_refusal",
    "refers_to_user",
    "refusal_text",
    "reply_privacy",
    "reply_refusal",
]

# The spec's marker for an answer a model or a reviewer flagged as not valid.
INVALID_MARKER = re.compile(r"<\s*non[\s_-]*valide\s*>", re.IGNORECASE)
# What eko.chat.text.cap_answer appends when it cuts an answer short.
CUT_ELLIPSIS = "…"
# Message types that are not a model's answer to the question: never learned.
NOT_LEARNABLE_TYPES = frozenset({"fallback", "paywall", "cached_response"})
MAX_QUESTION_CHARS = 2000
MAX_ANSWER_CHARS = 8000

# Every refusal code, with the sentence a staff page shows for it.
REFUSALS: dict[str, str] = {
    "empty_question": "The question is empty.",
    "question_too_long": f"The question is longer than {MAX_QUESTION_CHARS} characters.",
    "not_a_question": (
        "The message is not a question (a statement, a greeting or a thanks): only questions "
        "are cached."
    ),
    "empty_answer": "The answer is empty.",
    "answer_too_long": f"The answer is longer than {MAX_ANSWER_CHARS} characters.",
    "marked_invalid": "The text is marked <non valide>.",
    "truncated": "The answer was cut short.",
    "incomplete": "The answer stops inside a code block.",
    "fallback": "No model answered: this is a fallback message.",
    "caller_instructions": (
        "Written under this conversation's own instructions: not an answer for anyone else."
    ),
    "caller_format": (
        "JSON or tool calls an API client asked for: not an answer to serve to anyone else."
    ),
    "personal_context": (
        "The answer depends on the user: their memory or profile was used for it."
    ),
    "about_the_user": "The question is about the user who asked it (my …, am I …, mon …).",
    "uses_user_facts": "The answer repeats one of the user's stored facts.",
    "not_an_answer": "Only an assistant's answer can be cached.",
    "no_question": "The question this answer replied to is gone.",
    "no_asker": "The user who asked is gone: a private answer has no one to serve.",
    "embedder_unavailable": "The embedder is unavailable; try again later.",
}


def refusal_text(code: str) -> str:
    """The sentence for a refusal code ("not_an_answer:paywall" -> its family's sentence)."""
    family, _, detail = code.partition(":")
    text = REFUSALS.get(family)
    if text is None:
        return f"Not cached ({code})."
    return f"{text} ({detail})" if detail else text


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
    """Why this question can never become an entry, or None when it may."""
    text = question.strip()
    if not text:
        return "empty_question"
    if len(text) > MAX_QUESTION_CHARS:
        return "question_too_long"
    if INVALID_MARKER.search(text):
        return "marked_invalid"
    if not is_question(text):
        return "not_a_question"
    return None


def lookup_refusal(question: str) -> str | None:
    """Why this message never gets a cached answer (None: look it up). A statement, a greeting
    or a thanks is answered by the model, whatever the cache holds."""
    if not question.strip():
        return "empty_question"
    if not is_question(question):
        return "not_a_question"
    return None


Privacy = Literal["shared", "private", "personal"]
# Sources that make an answer fit for its asker only (never shared, but cacheable for them):
# the room's earlier turns, the user's own locale/timezone settings, and their stored facts
# when the answer does not depend on them (see reply_refusal).
ASKER_ONLY_SOURCES = frozenset({"history", "settings", "facts"})


def reply_privacy(meta: Mapping[str, Any]) -> Privacy:
    """Who may be served this answer, from what the writer reported about its prompt.

    - `personal_context: False` -> "shared": everyone talking to the persona;
    - `personal_context: True` because of the room's earlier turns, the user's own
      locale/timezone settings and/or their stored facts only (`personal_context_sources`
      within ["history", "settings", "facts"]) -> "private": the asker alone;
    - `personal_context: True` for anything else (a question about the user, memory, or no
      sources given) -> "personal": never cached;
    - not reported (a writer that does not say) -> "private".

    Facts in the prompt do not make an answer personal by themselves: reply_refusal refuses
    the answers that used them (the question is about the user, or the answer repeats a fact).
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


def facts_used(meta: Mapping[str, Any]) -> list[str]:
    """The fact keys the writer found repeated in its answer (node data `answer_uses_facts`)."""
    nodes = meta.get("nodes")
    used: list[str] = []
    if isinstance(nodes, Mapping):
        for node in nodes.values():
            data = node.get("data") if isinstance(node, Mapping) else None
            keys = data.get("answer_uses_facts") if isinstance(data, Mapping) else None
            if isinstance(keys, list):
                used += [str(key) for key in keys]
    return used


def reply_refusal(*, message_type: str, answer: str, meta: Mapping[str, Any]) -> str | None:
    """Why a stored assistant reply can never be cached, or None when it may be.

    `meta` is the reply's metadata as the writers store it: `truncated` (stopped on max_tokens),
    `fallback` (no model answered), `caller_format` (JSON or tool calls for an API caller),
    `caller_instructions` (written under an API caller's system message), `personal_context`
    (see reply_privacy), and the response writer's `answer_uses_facts` (stored facts its
    answer repeats).
    """
    if message_type in NOT_LEARNABLE_TYPES:
        return f"not_an_answer:{message_type}"
    if meta.get("fallback"):
        return "fallback"
    if meta.get("caller_format"):
        # JSON or tool calls for an API caller: not prose the cache can serve to anyone else.
        return "caller_format"
    if meta.get("caller_instructions"):
        return "caller_instructions"
    if meta.get("truncated"):
        return "truncated"
    sources = meta.get("personal_context_sources")
    if isinstance(sources, list) and "about_the_user" in sources:
        return "about_the_user"
    if reply_privacy(meta) == "personal":
        return "personal_context"
    if facts_used(meta):
        return "uses_user_facts"
    return answer_refusal(answer)
