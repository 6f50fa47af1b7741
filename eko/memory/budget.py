"""One character budget for the whole dual context, shared by rule.

The rule (settings in eko/config/context.py), applied to sources each already ranked best
first:

1. **Recent turns** first, at most `recent_max_chars` and `recent_share` of the budget (the
   builder reads them with that cap; the newest turn is always kept, cut if needed).
2. **Facts** next, best first, while they use at most `facts_share` of the budget.
3. **Recalled turns and summaries** interleaved by rank — `turns_per_summary` recalled turns,
   then one summary, and so on — each taken when it still fits, until the budget is full (a
   piece that does not fit is passed over: a shorter one further down may).

Every decision is made on the rendered context (headings, dates and separators included), so
the context handed to the model never exceeds the budget.

When the model that reads the prompt declares a prompt budget, the same rule shares what its
prompt leaves for the conversation (`share_reader_room`): the recent window at most
`recent_share` of it (its newest turn always kept), memory at least the rest — so the recent
window can never take all the room and leave recalled evidence none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from eko.memory.context_parts import (
    ContextParts,
    ItemPart,
    RecentPart,
    SummaryPart,
    render_context,
    render_items,
)
from eko.memory.turn_recall import RecalledTurn, n_then_one

# Characters of budget per candidate hit asked of each retriever (words, meaning): most hits
# come alone (~150-250 characters; only the best come with their neighbours: turn_recall.py).
CHARS_PER_CANDIDATE = 250
# Below this budget (characters), recalled hits come without their neighbours.
NEIGHBOURS_FROM_CHARS = 2000


@dataclass(frozen=True, slots=True)
class BudgetRule:
    total: int
    recent_share: float = 0.5
    facts_share: float = 0.2
    turns_per_summary: int = 6

    @classmethod
    def from_settings(cls, settings: Any) -> BudgetRule | None:
        """The configured rule, or None when the budget is off (0)."""
        total = int(settings.memory_context_max_chars)
        if total <= 0:
            return None
        return cls(
            total=total,
            recent_share=settings.memory_context_recent_share,
            facts_share=settings.memory_context_facts_share,
            turns_per_summary=settings.memory_context_turns_per_summary,
        )

    def narrowed(self, total: int) -> BudgetRule:
        """The same rule within at most `total` characters (never wider)."""
        return replace(self, total=max(0, min(self.total, total)))

    def recent_cap(self, recent_max_chars: int) -> int:
        return max(0, min(recent_max_chars, int(self.total * self.recent_share)))

    @property
    def facts_cap(self) -> int:
        return int(self.total * self.facts_share)

    def neighbours(self, wanted: int) -> int:
        """The turns on each side a recalled hit comes with: none in a small budget (a
        reader's small room), where a hit with its neighbours (~750 characters) would not fit
        and be passed over, and the hit alone does."""
        return wanted if self.total >= NEIGHBOURS_FROM_CHARS else 0

    def candidates(self, base: int) -> int:
        """Hits each retriever should return so the budget can be filled: at least `base`,
        one per CHARS_PER_CANDIDATE of the budget."""
        return max(base, self.total // CHARS_PER_CANDIDATE)


@dataclass(frozen=True, slots=True)
class ReaderShare:
    """What the reader's room for the conversation gives each side, in characters."""

    room: int
    recent: int  # the recent window's chat messages at most (its newest turn always kept)

    def past(self, recent_used: int) -> int:
        """Memory's part: what the recent window leaves, at least its own floor."""
        return max(self.room - recent_used, self.room - self.recent, 0)


def share_reader_room(rule: BudgetRule | None, room: int) -> ReaderShare:
    """The one rule for a reader's room: the recent window gets at most the rule's recent
    share (READER_RECENT_SHARE without a rule), memory the rest and what the window leaves."""
    room = max(room, 0)
    share = rule.recent_share if rule is not None else READER_RECENT_SHARE
    return ReaderShare(room=room, recent=int(room * share))


# The recent window's share of a reader's room when memory has no budget rule of its own.
READER_RECENT_SHARE = 0.5


def interleave(
    recalled: Sequence[RecalledTurn], summaries: Sequence[SummaryPart], turns_per_summary: int
) -> list[RecalledTurn | SummaryPart]:
    """`turns_per_summary` recalled turns, one summary, and so on, each list in its order."""
    return n_then_one(recalled, summaries, turns_per_summary)


def pack(
    rule: BudgetRule,
    *,
    recent: RecentPart,
    items: Sequence[ItemPart],
    recalled: Sequence[RecalledTurn],
    summaries: Sequence[SummaryPart],
) -> ContextParts:
    """The parts that fit the budget by the rule above (the module's docstring)."""
    parts = ContextParts(recent=recent)
    if len(render_context(parts)) > rule.total:
        # Only when the budget is below the recent cap's rounding: cut the recent text.
        cut = replace(recent, text=recent.text[: max(0, rule.total - 40)])
        return ContextParts(recent=cut)
    kept_items: list[ItemPart] = []
    for item in items:
        trial = replace(parts, items=[*kept_items, item])
        if len(render_items(trial.items)) > rule.facts_cap:
            continue
        if len(render_context(trial)) <= rule.total:
            kept_items.append(item)
            parts = trial
    kept_turns: list[RecalledTurn] = []
    kept_summaries: list[SummaryPart] = []
    for piece in interleave(recalled, summaries, rule.turns_per_summary):
        if isinstance(piece, RecalledTurn):
            trial = replace(parts, recalled=[*kept_turns, piece])
        else:
            trial = replace(parts, summaries=[*kept_summaries, piece])
        if len(render_context(trial)) > rule.total:
            continue
        parts = trial
        if isinstance(piece, RecalledTurn):
            kept_turns.append(piece)
        else:
            kept_summaries.append(piece)
    return parts


def shares(parts: ContextParts) -> dict[str, int]:
    """Characters each source uses in the rendered context (for the context stats)."""
    return {
        "recent": len(parts.recent.text),
        "facts": len(render_items(parts.items)) if parts.items else 0,
        "recalled": sum(len(turn.text) for turn in parts.recalled),
        "summaries": sum(len(summary.text) for summary in parts.summaries),
    }
