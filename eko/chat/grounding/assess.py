"""The grounding of one turn: is the message a personal question, and does what the writer
was given mention its subject? Read from the writer's node context and sections."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from eko.chat.grounding.memory import memory_texts, remembered
from eko.chat.grounding.personal import personal_question
from eko.chat.grounding.report import GroundingReport

if TYPE_CHECKING:
    from eko.chat.engine.registry import NodeContext, WriterSection

# The memory node's sources (eko/chat/memory_context.py): its section is recalled memory.
# The user's profile section ("About the user") is not read as text: its facts are read
# from the context, and its "name: unknown" lines would count as mentions.
MEMORY_SOURCES = frozenset({"memory_facts", "history_summaries"})


def assess(context: NodeContext, sections: Sequence[WriterSection]) -> GroundingReport | None:
    """None when the message is not a personal question."""
    message = context.turn.user_message
    question = personal_question(message.content)
    if question is None:
        return None
    ctx = context.ctx
    texts = memory_texts(
        facts=[(fact.fact_key, fact.value) for fact in ctx.facts],
        user_turns=[
            item.content for item in ctx.history if item.role == "user" and item.seq < message.seq
        ],
        recalled=[
            section.text
            for section in sections
            if MEMORY_SOURCES.intersection(section.personal_sources)
        ],
    )
    known = remembered(question, texts)
    # Every key given, so the stored metadata always has the report's whole shape (ReplyMeta
    # stores only the keys that were set).
    return GroundingReport(
        subject=question.subject,
        remembered=known,
        note=not known,
        checked=False,
        flagged=False,
        corrected=False,
        original=None,
    )
