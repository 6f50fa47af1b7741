"""Earlier turns of the room that match the message: what was actually said.

Summaries compress; a question about a detail ("what did Caroline say she researched?") is
often answered only by the raw turn. This finds the room's messages that share the message's
rarer words (the full-text index of eko.store.message_search) or its meaning (the turn vectors
of eko.memory.turn_index), fused by reciprocal rank, older than the recent window already in
the context, and hands them back with their neighbours (the turn before and after: the
question and its answer) and their dates, best matches first, within a character budget.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import zip_longest
from typing import TypeVar

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import load_only

from eko.memory.speakers import speaker_names, speaker_of
from eko.memory.turn_index import DenseHit
from eko.store.message_search import search_messages
from eko.store.models import Message

# Each recalled message is cut to this many characters: several short turns beat one long one.
MESSAGE_CHARS = 400
# Messages around a hit that come with it (its question before, its answer after).
NEIGHBOURS = 1
# Full-text hits asked for by default (the budget may ask for more: eko.memory.budget).
RECALL_CANDIDATES = 12
# The usual constant of reciprocal rank fusion (Cormack et al., 2009): flattens the head.
RRF_K = 60

# The columns a recalled turn is made of: not the metadata, tool calls and reasoning, whose
# JSON (kilobytes per reply) would be decoded for nothing; any other read of them raises.
_RECALLED_COLUMNS = load_only(
    Message.id,
    Message.seq,
    Message.sender_id,
    Message.role,
    Message.content,
    Message.created_at,
    raiseload=True,
)

A = TypeVar("A")
B = TypeVar("B")


@dataclass(frozen=True, slots=True)
class Ranked:
    seq: int
    rank: float  # the fused score: higher is better


def fuse_by_rank(*rankings: Sequence[int], k: int = RRF_K) -> list[Ranked]:
    """Reciprocal rank fusion of best-first lists of message seqs: Σ 1/(k + rank)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for position, seq in enumerate(dict.fromkeys(ranking)):
            scores[seq] = scores.get(seq, 0.0) + 1.0 / (k + position + 1)
    ordered = sorted(scores.items(), key=lambda item: (-item[1], -item[0]))
    return [Ranked(seq, score) for seq, score in ordered]


@dataclass(frozen=True, slots=True)
class RecalledTurn:
    first_seq: int
    last_seq: int
    when: datetime
    rank: float
    text: str
    # The message that matched, then its neighbours (the facts drawn from them come along).
    message_ids: tuple[str, ...] = ()


def interleave_rankings(*rankings: Sequence[int]) -> list[int]:
    """Round robin over best-first lists of seqs: each list's 1st, then each one's 2nd, ...
    (a seq already taken is skipped). Sub-queries get an equal share of the head."""
    merged: dict[int, None] = {}
    for row in zip_longest(*rankings):
        for seq in row:
            if seq is not None:
                merged.setdefault(seq, None)
    return list(merged)


def n_then_one(first: Sequence[A], second: Sequence[B], n: int) -> list[A | B]:
    """`n` of `first`, then one of `second`, and so on, each in its order (what is left of
    either once the other runs out comes at the end). `n` ≥ 1."""
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n}")
    merged: list[A | B] = []
    for block in range(max(-(-len(first) // n), len(second))):
        merged.extend(first[block * n : (block + 1) * n])
        if block < len(second):
            merged.append(second[block])
    return merged


@dataclass(frozen=True, slots=True)
class SubQuery:
    """A part of a question needing several pieces (eko.memory.multihop), with its nearest
    turns by meaning."""

    text: str
    dense: Sequence[DenseHit] = ()


async def recall_turns(
    session: AsyncSession,
    *,
    dialect: str,
    room_id: str,
    query: str,
    before_seq: int | None,
    max_chars: int,
    assistant_name: str,
    candidates: int = RECALL_CANDIDATES,
    dense: Sequence[DenseHit] = (),
    sub_queries: Sequence[SubQuery] = (),
    pinned: Sequence[int] = (),
    neighbours: int = NEIGHBOURS,
    neighbours_head: int | None = None,
    ignore_words: Collection[str] = (),
    dated: Sequence[int] = (),
    prefer_sender: int | None = None,
    preferred_per_other: int = 4,
    member_names: Mapping[int, str] | None = None,
) -> list[RecalledTurn]:
    """Best matches first, each with its neighbours, until `max_chars` is used.

    Only the first `neighbours_head` hits (None: all) come with `neighbours` turns on each
    side; the others come alone, so the budget holds more distinct hits.

    `dense` are the nearest turns by meaning (eko.memory.turn_index); they are fused with the
    full-text matches by reciprocal rank, so a turn found both ways comes first. Each of
    `sub_queries` is fused the same way, and the rankings (the whole question's, `pinned` —
    e.g. the source turns of the facts in the context — and each sub-query's) are interleaved
    by rank. `ignore_words` are left out of the full-text queries (eko.memory.speakers);
    `dated`: the turns of the periods the question names (eko.memory.date_recall), best
    first, interleaved right after the whole question's ranking. `prefer_sender`: the member
    the question names, whose hits come first, `preferred_per_other` of theirs for each hit
    by anyone else (eko.memory.speakers.RoomSpeakers.named_member). `member_names`: the room's
    members' display names when the caller has them (RoomSpeakers.members): only a sender
    outside them is looked up."""
    if max_chars <= 0:
        return []
    rankings: list[list[int]] = []
    for text, near in [(query, dense), *((sub.text, sub.dense) for sub in sub_queries)]:
        words = await search_messages(
            session,
            dialect=dialect,
            room_id=room_id,
            query=text,
            limit=candidates,
            before_seq=before_seq,
            ignore=ignore_words,
        )
        rankings.append(
            [hit.seq for hit in fuse_by_rank([w.seq for w in words], [d.seq for d in near])]
        )
    allowed = [seq for seq in pinned if before_seq is None or seq < before_seq]
    within = [seq for seq in dated if before_seq is None or seq < before_seq]
    order = interleave_rankings(rankings[0], within, allowed, *rankings[1:])
    fused = {hit.seq: hit.rank for hit in fuse_by_rank(*rankings, within, allowed)}
    hits = [Ranked(seq, fused[seq]) for seq in order]
    if not hits:
        return []
    if prefer_sender is not None and preferred_per_other > 0:
        hits = await _sender_first(session, room_id, hits, prefer_sender, preferred_per_other)
    head = len(hits) if neighbours_head is None else neighbours_head
    radius = [neighbours if position < head else 0 for position in range(len(hits))]
    wanted = {
        seq
        for hit, around in zip(hits, radius, strict=True)
        for seq in range(hit.seq - around, hit.seq + around + 1)
        if before_seq is None or seq < before_seq
    }
    # With each turn, the speaker name an imported turn carries (its metadata's one key).
    speaker = Message.meta["speaker"].as_string()
    rows = await session.execute(
        select(Message, speaker)
        .options(_RECALLED_COLUMNS)
        .where(Message.room_id == room_id, Message.seq.in_(wanted))
        .limit(len(wanted))  # (room_id, seq) is unique: bounded by the hits
    )
    by_seq: dict[int, Message] = {}
    named: dict[str, str] = {}
    for message, own in rows:
        by_seq[message.seq] = message
        if own:
            named[message.id] = own
    names = dict(member_names or {})
    others = [m for m in by_seq.values() if m.sender_id is not None and m.sender_id not in names]
    if others:
        names.update(await speaker_names(session, others))
    recalled: list[RecalledTurn] = []
    used: set[int] = set()
    budget = max_chars
    for hit, around in zip(hits, radius, strict=True):
        seqs = [
            seq
            for seq in range(hit.seq - around, hit.seq + around + 1)
            if seq in by_seq and seq not in used
        ]
        if hit.seq not in seqs:
            continue
        lines = [_line(by_seq[seq], names, assistant_name, named) for seq in seqs]
        text = "\n".join(lines)
        if len(text) > budget:
            if recalled:
                break
            text = text[:budget]
        used.update(seqs)
        budget -= len(text) + 2
        recalled.append(
            RecalledTurn(
                first_seq=seqs[0],
                last_seq=seqs[-1],
                when=by_seq[hit.seq].created_at,
                rank=hit.rank,
                text=text,
                message_ids=(
                    by_seq[hit.seq].id,
                    *(by_seq[seq].id for seq in seqs if seq != hit.seq),
                ),
            )
        )
        if budget <= 0:
            break
    return recalled


async def _sender_first(
    session: AsyncSession, room_id: str, hits: list[Ranked], sender_id: int, per_other: int
) -> list[Ranked]:
    """`per_other` of the sender's hits, then one of anyone else's, and so on; each in its
    order."""
    rows = await session.execute(
        select(Message.seq, Message.sender_id)
        .where(Message.room_id == room_id, Message.seq.in_([hit.seq for hit in hits]))
        .limit(len(hits))  # (room_id, seq) is unique: bounded by the hits
    )
    sender_of = {int(row[0]): row[1] for row in rows}
    theirs = [hit for hit in hits if sender_of.get(hit.seq) == sender_id]
    others = [hit for hit in hits if sender_of.get(hit.seq) != sender_id]
    return n_then_one(theirs, others, per_other)


def render_recalled(turns: Sequence[RecalledTurn]) -> str:
    """Oldest first, each with its date."""
    ordered = sorted(turns, key=lambda turn: turn.first_seq)
    return "\n\n".join(_dated(turn.when, turn.text) for turn in ordered)


@functools.lru_cache(maxsize=1024)
def _dated(when: datetime, text: str) -> str:
    # The budget (eko.memory.budget.pack) renders the context once per candidate piece: the
    # same turns are dated again and again, tens of times per message.
    return f"[{when:%Y-%m-%d %H:%M}]\n{text}"


def _line(
    message: Message, names: Mapping[int, str], assistant_name: str, named: Mapping[str, str]
) -> str:
    speaker = speaker_of(message, names, assistant_name, named=named)
    content = " ".join(message.content.split())
    if len(content) > MESSAGE_CHARS:
        content = content[: MESSAGE_CHARS - 1] + "…"
    return f"{speaker}: {content}"
