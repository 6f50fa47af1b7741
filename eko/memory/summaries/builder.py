"""Hierarchical summaries L1…Ln of a room, triggered by characters at every level.

- L1: every `summarize_every_n_chars` raw characters of the room (a segment ends at the first
  message boundary at or past the threshold), summarized from the messages, each turn with its
  tool calls linked to their reasoning.
- L(k+1): every `summarize_every_n_chars` characters of consecutive Lk summaries, summarized
  from those summaries (its parents). No fixed top: a level appears when the one below is long
  enough.

Each summary is `{conversation_summary, actions_summary}` with char_range_start/end in the
room's raw characters, its parents, topics, an embedding, and the period it covers.

Work is computed from what is stored, never from a queue (segments.py). A segment
larger than the summarizer's input is summarized in parts then merged (calls.py): no
turn is left out. A summary is written in one transaction (store.py) and (room, level,
char_range_start) is unique, so a crash mid-way leaves no gap (the segment is simply redone)
and two builders racing make one summary (the loser's insert fails and it moves on). A model
failure stops the run; the next trigger retries the same segment. A backlog is caught up in
order, each new summary first cascading upwards.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import structlog
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from eko.config import Settings
from eko.embed.base import Embedder, EmbeddingError
from eko.llm.errors import LLMError
from eko.llm.runtime import LLMRuntime
from eko.memory.summaries.calls import (
    SegmentInput,
    SegmentSummarizer,
    child_block,
    l1_blocks,
)
from eko.memory.summaries.segments import Segment, SegmentFinder
from eko.memory.summaries.store import SummaryDraft, SummaryStore
from eko.memory.text import one_line
from eko.memory.topics import SameTopicProposal, Topics, clean_topic_name
from eko.memory.turns import ChatTurn, TurnStyle
from eko.prompts.library import PromptLibrary
from eko.store.db import Database
from eko.store.memory_models import Summary
from eko.store.models import Message, User
from eko.store.vectors import VectorIndex

__all__ = ["CatchUpResult", "SummaryBuilder", "SummaryHook"]

log = structlog.get_logger("eko.memory")


@dataclass(slots=True)
class CatchUpResult:
    room_id: str
    created: list[Summary] = field(default_factory=list)
    model_calls: int = 0
    # Why the run stopped before the backlog was done (None: nothing left to summarize).
    stopped: str | None = None

    def by_level(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for summary in self.created:
            counts[summary.level] = counts.get(summary.level, 0) + 1
        return counts

    def count_call(self) -> None:
        self.model_calls += 1


class SummaryBuilder:
    def __init__(
        self,
        *,
        database: Database,
        runtime: LLMRuntime,
        embedder: Embedder,
        vectors: VectorIndex,
        topics: Topics,
        prompts: PromptLibrary,
        settings: Settings,
    ) -> None:
        self._database = database
        self._embedder = embedder
        self._topics = topics
        self._settings = settings
        self.every = settings.summarize_every_n_chars
        self._segments = SegmentFinder(database, every=self.every)
        self._summarizer = SegmentSummarizer(runtime=runtime, prompts=prompts, settings=settings)
        self._store = SummaryStore(
            database=database, vectors=vectors, topics=topics, embedding_model=embedder.name
        )
        self._locks: dict[str, asyncio.Lock] = {}
        # Room → monotonic time before which the after-reply hook does not retry a failure.
        self._retry_at: dict[str, float] = {}

    def busy(self, room_id: str) -> bool:
        lock = self._locks.get(room_id)
        return lock is not None and lock.locked()

    def backing_off(self, room_id: str) -> bool:
        """True while a recent failure's retry delay runs (a failing model is not hammered
        after every reply; the segment is retried once the delay is over)."""
        return time.monotonic() < self._retry_at.get(room_id, 0.0)

    async def catch_up(
        self,
        room_id: str,
        *,
        max_new: int | None = None,
        on_created: Callable[[Summary], None] | None = None,
    ) -> CatchUpResult:
        """Make every summary the stored messages call for, oldest first; returns what was
        made. Stops early on a model or embedder failure (retried by the next run)."""
        result = CatchUpResult(room_id=room_id)
        lock = self._locks.setdefault(room_id, asyncio.Lock())
        async with lock:
            while max_new is None or len(result.created) < max_new:
                segment = await self._segments.next_segment(room_id)
                if segment is None:
                    break
                summary = await self._summarize(room_id, segment, result)
                if result.stopped is not None:
                    break
                if summary is not None:
                    result.created.append(summary)
                    if on_created is not None:
                        on_created(summary)
            else:
                result.stopped = "limit"
        if result.stopped is not None and result.stopped != "limit":
            self._retry_at[room_id] = time.monotonic() + self._settings.summary_retry_after_s
        elif result.stopped is None:
            self._retry_at.pop(room_id, None)
        if result.created or result.stopped:
            log.info(
                "memory.summaries.caught_up",
                room_id=room_id,
                created=result.by_level(),
                model_calls=result.model_calls,
                stopped=result.stopped,
            )
        return result

    async def pending_l1(self, room_id: str) -> int:
        """How many L1 summaries the stored messages call for now (higher levels follow)."""
        return await self._segments.pending_l1(room_id)

    async def _summarize(
        self, room_id: str, segment: Segment, result: CatchUpResult
    ) -> Summary | None:
        source = await self._input(segment)
        try:
            written = await self._summarizer.summarize(room_id, segment, source, result.count_call)
        except LLMError as exc:
            log.warning(
                "memory.summary.model_failed",
                room_id=room_id,
                level=segment.level,
                start=segment.char_range_start,
                error=str(exc),
            )
            result.stopped = f"model failed: {str(exc)[:300]}"
            return None
        data = written.data
        conversation = one_line(data.conversation_summary)
        actions = one_line(data.actions_summary)
        names = [n for n in (clean_topic_name(t) for t in data.topics) if n]
        try:
            vectors = await self._embedder.embed(
                [f"{conversation}\n{actions}", *names], kind="passage"
            )
        except EmbeddingError as exc:
            log.warning("memory.summary.embed_failed", room_id=room_id, error=str(exc))
            result.stopped = f"embedder failed: {str(exc)[:300]}"
            return None
        meta = {
            **written.meta,
            "provider": written.provider,
            "model": written.model,
            "fallback_used": written.fallback_used,
        }
        proposals = [
            SameTopicProposal(p.first, p.second, p.confidence)
            for p in getattr(data, "same_topics", [])
        ]
        draft = SummaryDraft(conversation, actions, names, vectors, proposals, meta)
        try:
            return await self._store.store(room_id, segment, draft)
        except IntegrityError as exc:
            if await self._segments.exists(room_id, segment):
                # Another builder (another worker) stored this segment first: nothing to redo.
                log.info(
                    "memory.summary.already_made",
                    room_id=room_id,
                    level=segment.level,
                    start=segment.char_range_start,
                )
                return None
            # Some other row clashed (e.g. a topic created concurrently): stop, retry later,
            # rather than asking the model for the same segment in a loop.
            log.warning(
                "memory.summary.write_failed",
                room_id=room_id,
                level=segment.level,
                start=segment.char_range_start,
                error=str(exc)[:300],
            )
            result.stopped = f"write failed: {str(exc)[:300]}"
            return None

    async def _input(self, segment: Segment) -> SegmentInput:
        if segment.level == 1:
            names = await self._sender_names(segment.messages)
            style = TurnStyle(
                mode="summary", assistant_label=f"Assistant ({self._settings.assistant_name})"
            )
            return SegmentInput(blocks=l1_blocks(segment, names, style), topic_names=[])
        async with self._database.session() as session:
            topic_names = await self._topics.names_of_summaries(
                session, [child.id for child in segment.children]
            )
        blocks = [child_block(n, c) for n, c in enumerate(segment.children, start=1)]
        known = [name for names in topic_names.values() for name in names]
        return SegmentInput(blocks=blocks, topic_names=known)

    async def _sender_names(self, messages: Sequence[Message]) -> dict[int, str]:
        ids = {m.sender_id for m in messages if m.sender_id is not None}
        if not ids:
            return {}
        async with self._database.session() as session:
            rows = await session.execute(select(User.id, User.display_name).where(User.id.in_(ids)))
            return {row[0]: row[1] for row in rows}


class SummaryHook:
    """AfterReply: catch the room's summaries up, off the request path."""

    name = "memory.summaries"
    uses_model = True  # waits while every provider is down (eko.jobs.registry)

    def __init__(self, builder: SummaryBuilder) -> None:
        self._builder = builder

    async def after(self, turn: ChatTurn, reply: Message) -> None:
        if self._builder.busy(turn.room.id):
            return  # a run in progress loops until nothing is ready: it will see this reply
        if self._builder.backing_off(turn.room.id):
            return  # a recent failure: retried once summary_retry_after_s has passed
        await self._builder.catch_up(turn.room.id)
