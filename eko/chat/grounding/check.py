"""After the writer: a reply to a personal question memory knows nothing about must not
claim to know. A rule, no model call: the reply passes when it says it does not know (the
`dont_know` phrases of personal_words.json, French and English) or only asks questions back;
anything else asserts something it was never told and is replaced by the "I don't know —
tell me?" answer of eko/prompts/writer/grounding/dont_know_*.md, in the user's language.
"""

from __future__ import annotations

import re

from eko.chat.grounding.report import ORIGINAL_MAX_CHARS, GroundingReport
from eko.chat.grounding.words import WordLists, word_lists
from eko.guard.utterance import fold
from eko.prompts.library import PromptLibrary

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def says_unknown(reply: str, lists: WordLists | None = None) -> bool:
    """The reply says it does not know ("I don't know", "tu ne me l'as pas dit")."""
    lists = lists or word_lists()
    text = " ".join(fold(reply.replace("œ", "oe")).split())
    return any(phrase in text for phrase in lists.dont_know)


def only_asks(reply: str) -> bool:
    """Every sentence of the reply is a question ("Which instruments does she play?")."""
    sentences = [s.strip() for s in _SENTENCE_END.split(reply.strip()) if s.strip()]
    return bool(sentences) and all(s.rstrip(" )»\"'*").endswith("?") for s in sentences)


def asserts_unknown(reply: str, lists: WordLists | None = None) -> bool:
    """The reply claims something memory does not hold (it neither says it does not know
    nor only asks)."""
    return bool(reply.strip()) and not says_unknown(reply, lists) and not only_asks(reply)


def dont_know_answer(prompts: PromptLibrary, *, language: str | None, use_tu: bool | None) -> str:
    """The replacement answer in the user's language (French: "vous" only when the user asked
    for it, as the writer's address rule)."""
    if language == "fr":
        return prompts.text(
            f"writer/grounding/dont_know_fr_{'vous' if use_tu is False else 'tu'}.md"
        )
    return prompts.text("writer/grounding/dont_know_en.md")


def check_reply(
    report: GroundingReport,
    reply: str,
    prompts: PromptLibrary,
    *,
    language: str | None,
    use_tu: bool | None,
) -> str:
    """The reply to send: `reply`, or the "I don't know" answer when it asserts what memory
    does not hold. Only a reply written after the note is checked; `report` is updated."""
    if not report.note:
        return reply
    report.checked = True
    if not asserts_unknown(reply):
        return reply
    report.flagged = True
    report.corrected = True
    report.original = reply[:ORIGINAL_MAX_CHARS]
    return dont_know_answer(prompts, language=language, use_tu=use_tu)
