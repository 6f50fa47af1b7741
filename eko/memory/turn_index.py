"""The room's messages as vectors: the dense half of the hybrid recall over raw turns.

Full-text search finds a turn that shares the question's words; a turn that says the same
thing in other words ("she paints" for "what is her hobby?") needs its meaning. Each user and
assistant message is embedded once into the vector index (collection "turn", key = room id,
item = message id) as "Speaker: content": questions name people ("what did Caroline
research?"), and a turn rarely names its own speaker. On LoCoMo's dev questions the speaker
took dense recall at ~6k characters from 40% to 72% (an offline run on the bench's data);
vectors written before it (content only) still work and `eko memory reindex` rewrites them.

With `EKO_MEMORY_INDEX_PREVIOUS_CHARS` > 0 the vector is of the turn *after the head of the
turn before it* (when that one was said in the same sitting): a reply makes sense with what it
answers ("Yes, every weekend!" after "Do you still paint?"). With 400 characters, on the dev
questions of 2026-11-25 (the former, loose score), dense ranking alone put every evidence turn
of a question in its top 20 for 65% of them instead of 57%, and the context's content recall
at 16k characters went from 90.0% to 92.7%. But the bundled embedder's cost is per token: the
head halved its speed, and an import's 700 turns missed their minute. The turn alone (0) was
measured against 400 with the strict score in docs/benchmarks.md ("Import and reindex"): it
lost recall on the held-out questions, so 400 stays the default.

Messages are indexed as they arrive, off the request path; what writes the missing vectors
(after each reply, a context build's bounded catch-up, an import's batches) is
turn_indexer.py. `eko memory reindex` indexes a whole history ahead of time (`reindex`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.embed.base import Embedder
from eko.memory.scopes import room_key
from eko.memory.speakers import speaker_names, speaker_of
from eko.store.messages import seqs_of_messages
from eko.store.models import Embedding, Message
from eko.store.vectors import VectorIndex, VectorItem

COLLECTION = "turn"
# A turn longer than this is embedded by its head: what a short question can match.
EMBED_CHARS = 1_000
BATCH = 64
# Ids per IN (...) list when checking which messages have a vector.
IN_CHUNK = 500
# The head of the turn before that goes into a turn's vector (EKO_MEMORY_INDEX_PREVIOUS_CHARS;
# 0: none), and how far back it may be: further apart, the two turns belong to different
# sittings and one says nothing of the other.
PREVIOUS_CHARS = 400
PREVIOUS_GAP = timedelta(hours=6)


@dataclass(frozen=True, slots=True)
class DenseHit:
    seq: int
    message_id: str
    score: float


@dataclass(frozen=True, slots=True)
class Look:
    """What a look for unindexed turns found: those turns, oldest first, and the newest seq it
    read (None: it read none)."""

    missing: list[Message]
    newest_seq: int | None


class TurnIndex:
    def __init__(
        self,
        *,
        vectors: VectorIndex,
        embedder: Embedder,
        assistant_name: str,
        previous_chars: int = PREVIOUS_CHARS,
    ) -> None:
        """`previous_chars`: how much of the turn before goes into a turn's vector (0: none)."""
        self._vectors = vectors
        self._embedder = embedder
        self._assistant_name = assistant_name
        self._previous_chars = previous_chars

    async def still_missing(
        self, session: AsyncSession, messages: Sequence[Message]
    ) -> list[Message]:
        """Those of `messages` that nobody indexed meanwhile (an exchange's job, a request)."""
        rows = await session.execute(
            select(Embedding.item_id, Embedding.model).where(
                Embedding.collection == COLLECTION,
                Embedding.item_id.in_([m.id for m in messages]),
            )
        )
        indexed = {item for item, model in rows if model == self._embedder.name}
        return [m for m in messages if m.id not in indexed]

    async def reindex(
        self,
        session: AsyncSession,
        *,
        room_id: str,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Embed every message of the room again (a new embedder, a restored database)."""
        rows = (
            await session.execute(
                select(Message)
                .where(Message.room_id == room_id, Message.role.in_(("user", "assistant")))
                .order_by(Message.seq)
            )
        ).scalars()
        messages = list(rows)
        done = 0
        for start in range(0, len(messages), BATCH):
            done += await self.index(session, room_id, messages[start : start + BATCH])
            await session.commit()  # a long history is kept batch by batch, not all or nothing
            if progress is not None:
                progress(done, len(messages))
        return done

    async def rooms(self, session: AsyncSession) -> list[str]:
        """Every room that has messages, oldest first: what `eko memory reindex --all` walks."""
        rows = await session.execute(
            select(Message.room_id).group_by(Message.room_id).order_by(func.min(Message.seq))
        )
        return [row[0] for row in rows]

    async def search(
        self,
        session: AsyncSession,
        *,
        room_id: str,
        vectors: Sequence[np.ndarray],
        before_seq: int | None,
        k: int,
    ) -> list[list[DenseHit]]:
        """For each of `vectors`, the k turns nearest to it among the room's messages before
        `before_seq`: one pass over the room's vectors and one look-up of the hits' seqs."""
        # Newer turns (the recent window) are already in the context: ask for a few more.
        found = await self._vectors.search_each(
            session,
            collection=COLLECTION,
            model=self._embedder.name,
            keys=[room_key(room_id)],
            queries=vectors,
            k=k * 2,
        )
        ids = [hit.item_id for hits in found for hit in hits]
        seq_of = await seqs_of_messages(session, room_id=room_id, message_ids=ids) if ids else {}
        return [
            [
                DenseHit(seq=seq_of[hit.item_id], message_id=hit.item_id, score=hit.score)
                for hit in hits
                if hit.item_id in seq_of
                and (before_seq is None or seq_of[hit.item_id] < before_seq)
            ][:k]
            for hits in found
        ]

    async def look(
        self,
        session: AsyncSession,
        *,
        room_id: str,
        limit: int | None,
        before_seq: int | None,
        from_seq: int | None = None,
    ) -> Look:
        """The room's messages without a vector, among its newest `limit` (None: all) before
        `before_seq` (and from `from_seq`) — a bounded look whatever the room's length; older
        gaps are `eko memory reindex`'s — with the newest seq it read."""
        # Each message with the model of its vector, if any: a correlated probe of the
        # (collection, item_id) unique index per message read, in the same statement — never a
        # join a planner could turn into a scan of the room's vectors (PostgreSQL did), and
        # not the model in the WHERE (SQLite then took the (collection, model, key) index).
        model = (
            select(Embedding.model)
            .where(Embedding.collection == COLLECTION, Embedding.item_id == Message.id)
            .correlate(Message)
            .scalar_subquery()
        )
        newest = select(Message.id, Message.seq, model).where(
            Message.room_id == room_id, Message.role.in_(("user", "assistant"))
        )
        if before_seq is not None:
            newest = newest.where(Message.seq < before_seq)
        if from_seq is not None:
            newest = newest.where(Message.seq >= from_seq)
        if limit is not None:
            newest = newest.order_by(Message.seq.desc()).limit(limit)
        rows = (await session.execute(newest)).all()
        newest_seq = max((int(row[1]) for row in rows), default=None)
        missing = [item for item, _, indexed in rows if indexed != self._embedder.name]
        messages: list[Message] = []
        for start in range(0, len(missing), IN_CHUNK):
            chunk = missing[start : start + IN_CHUNK]
            found = await session.execute(
                select(Message).where(Message.id.in_(chunk)).limit(len(chunk))  # ids: unique
            )
            messages.extend(found.scalars())
        # At most `limit` rows: sorted here rather than by the database (no temporary sort).
        return Look(sorted(messages, key=lambda m: m.seq), newest_seq)

    async def index(self, session: AsyncSession, room_id: str, messages: Sequence[Message]) -> int:
        """Embed `messages` (the empty ones skipped) into the room's vectors, uncommitted;
        returns how many."""
        kept = [m for m in messages if m.content.strip()]
        if not kept:
            return 0
        # The embedded text is stored with the vector: `eko db reembed` redoes it from there.
        previous = await _previous_turns(session, room_id, kept) if self._previous_chars else {}
        names = await speaker_names(session, [*kept, *previous.values()])
        texts = [
            embedded_text(
                m,
                names,
                self._assistant_name,
                previous=previous.get(m.seq - 1),
                previous_chars=self._previous_chars,
            )
            for m in kept
        ]
        vectors = await self._embedder.embed(texts, kind="passage")
        await self._vectors.upsert_many(
            session,
            collection=COLLECTION,
            model=self._embedder.name,
            items=[
                VectorItem(item_id=m.id, key=room_key(room_id), text=text)
                for m, text in zip(kept, texts, strict=True)
            ],
            vectors=vectors,
        )
        return len(kept)


async def _previous_turns(
    session: AsyncSession, room_id: str, messages: Sequence[Message]
) -> dict[int, Message]:
    """The room's turns just before `messages`, by seq: those among `messages` themselves,
    the others looked up (one query per IN_CHUNK seqs)."""
    given = {m.seq: m for m in messages}
    found = {m.seq - 1: given[m.seq - 1] for m in messages if m.seq - 1 in given}
    seqs = sorted({m.seq - 1 for m in messages if m.seq > 1} - found.keys())
    for start in range(0, len(seqs), IN_CHUNK):
        chunk = seqs[start : start + IN_CHUNK]
        rows = await session.execute(
            select(Message)
            .where(
                Message.room_id == room_id,
                Message.seq.in_(chunk),
                Message.role.in_(("user", "assistant")),
            )
            .limit(len(chunk))  # (room, seq) is unique
        )
        found.update((m.seq, m) for m in rows.scalars())
    return found


def embedded_text(
    message: Message,
    names: Mapping[int, str],
    assistant_name: str,
    *,
    previous: Message | None = None,
    previous_chars: int = PREVIOUS_CHARS,
) -> str:
    """What a turn's vector is of (turn_text)."""
    before = None
    if previous is not None:
        speaker = speaker_of(previous, names, assistant_name)
        before = (speaker, previous.content, previous.created_at)
    speaker = speaker_of(message, names, assistant_name)
    return turn_text(
        speaker, message.content, message.created_at, previous=before, chars=previous_chars
    )


def turn_text(
    speaker: str,
    content: str,
    when: datetime,
    *,
    previous: tuple[str, str, datetime] | None = None,
    chars: int = PREVIOUS_CHARS,
) -> str:
    """A turn's speaker and words (speaker_line), after the head of the turn before it (its
    first `chars` characters; its (speaker, content, when)) when that one was said in the
    same sitting."""
    line = speaker_line(speaker, content)
    if previous is None or chars <= 0:
        return line
    before_speaker, before_content, before_when = previous
    if not before_content.strip() or _apart(when, before_when) > PREVIOUS_GAP:
        return line
    return f"{speaker_line(before_speaker, before_content)[:chars]}\n{line}"


def _apart(a: datetime, b: datetime) -> timedelta:
    # SQLite hands back naive UTC times, PostgreSQL aware ones: compare like with like.
    if (a.tzinfo is None) != (b.tzinfo is None):
        a, b = a.replace(tzinfo=None), b.replace(tzinfo=None)
    return abs(a - b)


def speaker_line(speaker: str, content: str) -> str:
    """A turn's speaker and its words, cut to EMBED_CHARS."""
    return f"{speaker}: {content}"[:EMBED_CHARS]
