"""The dual context's parts and how they are written into a prompt (the seed's layout)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from eko.memory.clock import age_days
from eko.memory.text import normalize_key
from eko.memory.turn_recall import RecalledTurn, render_recalled
from eko.store.memory_models import Summary

SECTION_RULE = "\n\n---\n\n"


@dataclass(frozen=True, slots=True)
class SummaryPart:
    summary_id: str
    level: int
    char_range_start: int
    char_range_end: int
    similarity: float
    level_boost: float
    recency: float
    score: float
    topics: list[str]
    text: str


@dataclass(frozen=True, slots=True)
class ItemPart:
    item_id: str
    kind: str
    subject: str
    content: str
    score: float


@dataclass(frozen=True, slots=True)
class RecentPart:
    turns: int
    messages: int
    first_seq: int | None
    # The recent window's first raw character: summaries starting here or later are skipped.
    char_start: int | None
    text: str


EMPTY_RECENT = RecentPart(turns=0, messages=0, first_seq=None, char_start=None, text="")


@dataclass(frozen=True, slots=True)
class ContextParts:
    recent: RecentPart
    summaries: list[SummaryPart] = field(default_factory=list)
    items: list[ItemPart] = field(default_factory=list)
    # Older turns of the room that share words with the message (eko.memory.turn_recall).
    recalled: list[RecalledTurn] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class DualContext:
    text: str
    parts: ContextParts
    stats: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "parts": asdict(self.parts), "stats": self.stats}

    def past_text(self, *, heading: str = "###") -> str:
        """Only the summaries and the facts: for a writer that already sends the recent turns
        as chat messages (the recent window still decided which summaries to skip)."""
        return render_context(
            ContextParts(
                recent=EMPTY_RECENT,
                summaries=self.parts.summaries,
                items=self.parts.items,
                recalled=self.parts.recalled,
            ),
            heading=heading,
        )


def render_summary(summary: Summary, topics: Sequence[str], now: datetime) -> str:
    span = f"chars {summary.char_range_start}-{summary.char_range_end}"
    title = ", ".join(topics) if topics else span
    return (
        f"[L{summary.level} Summary - {title} - {ago(summary.period_end, now)}]\n"
        f'Conversation: "{summary.conversation_summary}"\n'
        f'Actions: "{summary.actions_summary}"'
    )


def render_items(items: Sequence[ItemPart]) -> str:
    """What You Know: facts grouped per person or subject, then self-knowledge.

    `items` arrive best first. Facts without a subject come first, as a plain list (a list
    without a heading cannot be read as one more fact about the person above it); then one
    block per subject ("Caroline:" and its facts), subjects in the order of their best fact,
    facts within a subject in their order. Spellings of one subject ("Caroline", "caroline")
    share a block, titled as first seen. Self-knowledge keeps its "About yourself" list.
    """
    blocks = []
    loose = [f"- {item.content}" for item in items if item.kind == "fact" and not _key(item)]
    if loose:
        blocks.append("\n".join(loose))
    groups: dict[str, tuple[str, list[str]]] = {}
    for item in items:
        if item.kind == "fact" and (key := _key(item)):
            groups.setdefault(key, (item.subject, []))[1].append(f"- {item.content}")
    blocks.extend(f"{subject}:\n" + "\n".join(lines) for subject, lines in groups.values())
    own = [
        f"- {item.subject}: {item.content}" if item.subject else f"- {item.content}"
        for item in items
        if item.kind == "self"
    ]
    if own:
        blocks.append("About yourself:\n" + "\n".join(own))
    return "\n\n".join(blocks)


def _key(item: ItemPart) -> str:
    return normalize_key(item.subject)


def render_context(parts: ContextParts, *, heading: str = "##") -> str:
    """The seed's layout; empty sections are left out (an empty context is an empty string)."""
    sections = []
    if parts.recent.text:
        sections.append(f"{heading} Recent Conversation\n\n" + parts.recent.text)
    if parts.summaries:
        sections.append(
            f"{heading} Relevant Past Context\n\n"
            + "\n\n".join(part.text for part in parts.summaries)
        )
    if parts.recalled:
        sections.append(
            f"{heading} Earlier in This Conversation\n\n" + render_recalled(parts.recalled)
        )
    if parts.items:
        sections.append(f"{heading} What You Know\n\n" + render_items(parts.items))
    return SECTION_RULE.join(sections)


def ago(moment: datetime, now: datetime) -> str:
    days = age_days(moment, now)
    if days < 1:
        return "today"
    if days < 2:
        return "1 day ago"
    if days < 60:
        return f"{int(days)} days ago"
    if days < 730:
        return f"{int(days // 30)} months ago"
    return f"{int(days // 365)} years ago"
