"""The recent window: the last turns of a room before one message, verbatim.

One window per message, counted in turns (a turn is a message and the assistant's answers to
it), read once and handed to everything that needs it: the writer sends its messages as chat
messages, memory recalls only what is older than its first message and skips the summaries
that only cover it, and the chain gives its stages the same turns. So every earlier message
reaches the model by one route: in the window, or recalled / summarised from before it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import defer

from eko.memory.budget import BudgetRule
from eko.memory.context_parts import EMPTY_RECENT, RecentPart
from eko.memory.turns import ConversationTurn, TurnStyle, group_turns, render_turns
from eko.store.models import Message, User

# Messages read per wanted turn (a message, its answer, and room for a lobby's chatter).
MESSAGES_PER_TURN = 3
# The keys of a message's metadata that readers of the window use (the chat engine's continuity:
# the previous turn's intent, mode and intro target). Only these are read: a reply's whole
# metadata (~5 KB of JSON: plan, nodes, timings) was decoded for ~15 replies a message.
META_KEYS = ("intent", "mode", "smalltalk_target_key")


@dataclass(frozen=True, slots=True)
class RecentWindow:
    """The turns before `before_seq` that the model reads verbatim, chronological."""

    turns: tuple[ConversationTurn, ...] = ()
    # Display names of the senders (several people speak in a lobby).
    names: Mapping[int, str] = field(default_factory=dict)
    part: RecentPart = EMPTY_RECENT
    # By message id: its metadata's META_KEYS that are set. The messages' own `meta` is not
    # loaded (reading it raises).
    meta: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def messages(self) -> list[Message]:
        return [message for turn in self.turns for message in turn.messages]

    @property
    def first_seq(self) -> int | None:
        """Memory recalls only messages before this one: the window shows the rest."""
        return self.turns[0].first_seq if self.turns else None


EMPTY_WINDOW = RecentWindow()


@dataclass(frozen=True, slots=True)
class RecentReader:
    """Reads the window by one rule, wherever it is read (the chat path reads it once)."""

    turns: int
    lobby_turns: int
    max_chars: int
    assistant_name: str = "Eko"

    @classmethod
    def from_settings(cls, settings: Any) -> RecentReader:
        """The window's size: `recent_turns` (a lobby: `lobby_recent_turns`) turns, at most
        `recent_max_chars` and the recent share of the memory budget."""
        rule = BudgetRule.from_settings(settings)
        cap = settings.recent_max_chars
        return cls(
            turns=settings.recent_turns,
            lobby_turns=settings.lobby_recent_turns,
            max_chars=rule.recent_cap(cap) if rule is not None else cap,
            assistant_name=settings.assistant_name,
        )

    def turns_for(self, room_kind: str) -> int:
        # Several people speak in a lobby: its window holds more turns.
        return self.lobby_turns if room_kind == "lobby" else self.turns

    async def read(
        self,
        session: AsyncSession,
        *,
        room_id: str,
        room_kind: str,
        before_seq: int | None,
        known_names: Mapping[int, str] | None = None,
    ) -> RecentWindow:
        """The last turns before `before_seq` (all messages when None) that fit `max_chars`.
        `known_names`: display names the caller holds already (the asking user's), by user id:
        only other senders are looked up."""
        wanted = self.turns_for(room_kind)
        if wanted <= 0 or self.max_chars <= 0 or (before_seq is not None and before_seq <= 1):
            return EMPTY_WINDOW
        query = (
            select(Message, *(Message.meta[key].as_string() for key in META_KEYS))
            .options(defer(Message.meta, raiseload=True))
            .where(Message.room_id == room_id)
        )
        if before_seq is not None:
            query = query.where(Message.seq < before_seq)
        rows = (
            await session.execute(
                query.order_by(Message.seq.desc()).limit(wanted * MESSAGES_PER_TURN)
            )
        ).all()
        messages = [row[0] for row in reversed(rows)]
        meta = {
            row[0].id: {
                key: value
                for key, value in zip(META_KEYS, row[1:], strict=True)
                if value is not None
            }
            for row in rows
        }
        names = await sender_names(session, messages, known=known_names)
        return self.fit(group_turns(messages)[-wanted:], names, meta)

    def fit(
        self,
        turns: Sequence[ConversationTurn],
        names: Mapping[int, str],
        meta: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> RecentWindow:
        """The newest turns whose rendering fits `max_chars` (the newest always kept)."""
        style = self.style()
        kept: list[ConversationTurn] = []
        used = 0
        for turn in reversed(turns):
            size = len(render_turns([turn], names, style=style)) + (2 if kept else 0)
            if kept and used + size > self.max_chars:
                break
            kept.insert(0, turn)
            used += size
        if not kept:
            return EMPTY_WINDOW
        text = render_turns(kept, names, style=style, max_chars=self.max_chars)
        part = RecentPart(
            turns=len(kept),
            messages=sum(len(turn.messages) for turn in kept),
            first_seq=kept[0].first_seq,
            char_start=kept[0].char_start,
            text=text,
        )
        return RecentWindow(turns=tuple(kept), names=names, part=part, meta=meta or {})

    def newest(
        self, window: RecentWindow, max_chars: int, size: Callable[[Message], int]
    ) -> RecentWindow:
        """The newest turns of `window` whose messages' `size` adds up to at most `max_chars`
        (the newest turn always kept): the window narrowed to its share of a reader's room."""
        kept, used = 0, 0
        for turn in reversed(window.turns):
            turn_size = sum(size(message) for message in turn.messages)
            if kept and used + turn_size > max_chars:
                break
            kept, used = kept + 1, used + turn_size
        if kept == len(window.turns):
            return window
        return self.fit(window.turns[-kept:], window.names, window.meta)

    def style(self) -> TurnStyle:
        return TurnStyle(mode="context", assistant_label=f"Assistant ({self.assistant_name})")


async def sender_names(
    session: AsyncSession, messages: Sequence[Message], *, known: Mapping[int, str] | None = None
) -> dict[int, str]:
    """The senders' display names by user id: `known` ones as given, the others read."""
    names = dict(known or {})
    ids = {m.sender_id for m in messages if m.sender_id is not None} - names.keys()
    if ids:
        rows = await session.execute(select(User.id, User.display_name).where(User.id.in_(ids)))
        names.update((row[0], row[1]) for row in rows)
    return names
