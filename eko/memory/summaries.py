"""Hierarchical summaries L1…Ln of a room, triggered by characters at every level.

- L1: every `summarize_every_n_chars` raw characters of the room (a segment ends at the first
  message boundary at or past the threshold), summarized from the messages, each turn with its
  tool calls linked to their reasoning.
- L(k+1): every `summarize_every_n_chars` characters of consecutive Lk summaries, summarized
  from those summaries (its parents). No fixed top: a level appears when the one below is long
  enough.

Each summary is `{conversation_summary, actions_summary}` with char_range_start/end in the
room's raw characters, its parents, topics, an embedding, and the period it covers.

Work is computed from what is stored, never from a queue: the next segment of a level starts
where that level's last summary ends. A summary is written in one transaction (row, parents,
topics, vector) and (room, level, char_range_start) is unique, so a crash mid-way leaves no gap
(the segment is simply redone) and two builders racing make one summary (the loser's insert
fails and it moves on). A model failure stops the run; the next trigger retries the same
segment. A backlog is caught up in order, each new summary first cascading upwards.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from string import Template
from typing import Any

import structlog
from pydantic import BaseModel, create_model
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from eko.config import Settings
from eko.embed.base import Embedder, EmbeddingError
from eko.llm.errors import AllProvidersFailed, LLMError
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage
from eko.memory.clock import as_utc
from eko.memory.outputs import Confidence, bounded_list, bounded_text
from eko.memory.scopes import room_key
from eko.memory.text import clip, one_line
from eko.memory.topics import SameTopicProposal, Topics, clean_topic_name
from eko.memory.turns import ChatTurn, TurnStyle, group_turns, render_turns
from eko.prompts.library import PromptLibrary
from eko.store.db import Database
from eko.store.memory_models import Summary, SummaryParent
from eko.store.models import Message, User, utcnow
from eko.store.vectors import VectorIndex

log = structlog.get_logger("eko.memory")

COLLECTION = "summary"
MESSAGE_PAGE = 500
# Lk summaries read when looking for the next L(k+1) segment (their characters add up to the
# threshold long before this, unless summaries are a few characters long).
CHILDREN_PAGE = 2000
MAX_TOPIC_NAME_CHARS = 60
MAX_SAME_TOPIC_PROPOSALS = 3
# Summaries should be factual: little sampling freedom.
SUMMARY_TEMPERATURE = 0.2


@dataclass(slots=True)
class Segment:
    level: int
    char_range_start: int
    char_range_end: int
    first_seq: int
    last_seq: int
    messages: list[Message] = field(default_factory=list)  # level 1
    children: list[Summary] = field(default_factory=list)  # level ≥ 2

    @property
    def period(self) -> tuple[Any, Any]:
        if self.messages:
            return self.messages[0].created_at, self.messages[-1].created_at
        return self.children[0].period_start, self.children[-1].period_end


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


def summary_text(summary: Summary) -> str:
    """What is embedded and what the next level reads."""
    return f"{summary.conversation_summary}\n{summary.actions_summary}"


def summary_output_model(*, part_max_chars: int, max_topics: int, higher: bool) -> type[BaseModel]:
    """The seed's output schema ({conversation_summary, actions_summary}, maxLength each) plus
    topics, and for L2+ the topics the model thinks are the same."""
    text = bounded_text(part_max_chars)
    name = bounded_text(MAX_TOPIC_NAME_CHARS)
    fields: dict[str, Any] = {
        "conversation_summary": (text, ...),
        "actions_summary": (text, ...),
        "topics": (bounded_list(name, max_topics), ...),
    }
    if higher:
        same = create_model(
            "SameTopics", first=(name, ...), second=(name, ...), confidence=(Confidence, ...)
        )
        fields["same_topics"] = (bounded_list(same, MAX_SAME_TOPIC_PROPOSALS), ...)
    model: type[BaseModel] = create_model("HigherSummary" if higher else "L1Summary", **fields)
    return model


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
        self._runtime = runtime
        self._embedder = embedder
        self._vectors = vectors
        self._topics = topics
        self._prompts = prompts
        self._settings = settings
        self.every = settings.summarize_every_n_chars
        self._l1_output = summary_output_model(
            part_max_chars=settings.summary_part_max_chars,
            max_topics=settings.topics_per_summary,
            higher=False,
        )
        self._higher_output = summary_output_model(
            part_max_chars=settings.summary_part_max_chars,
            max_topics=settings.topics_per_summary,
            higher=True,
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
                segment = await self._next_segment(room_id)
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
        async with self._database.session() as session:
            start, _ = await self._level_end(session, room_id, 1)
            head = await _room_char_end(session, room_id)
        return max(0, (head - start) // self.every)

    # --- finding work ---

    async def _next_segment(self, room_id: str) -> Segment | None:
        """The highest level's ready segment first, so each new summary cascades upwards."""
        async with self._database.session() as session:
            top = (
                await session.execute(
                    select(Summary.level)
                    .where(Summary.room_id == room_id)
                    .order_by(Summary.level.desc())
                    .limit(1)
                )
            ).scalar()
            for level in range((top or 0) + 1, 1, -1):
                segment = await self._higher_segment(session, room_id, level)
                if segment is not None:
                    return segment
            return await self._l1_segment(session, room_id)

    async def _level_end(self, session: AsyncSession, room_id: str, level: int) -> tuple[int, int]:
        """(char_range_end, last_seq) of the level's last summary; (0, 0) when none."""
        row = (
            await session.execute(
                select(Summary.char_range_end, Summary.last_seq)
                .where(Summary.room_id == room_id, Summary.level == level)
                .order_by(Summary.char_range_end.desc())
                .limit(1)
            )
        ).first()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    async def _l1_segment(self, session: AsyncSession, room_id: str) -> Segment | None:
        start, after_seq = await self._level_end(session, room_id, 1)
        if await _room_char_end(session, room_id) - start < self.every:
            return None
        messages: list[Message] = []
        cursor = after_seq
        while True:
            page = (
                (
                    await session.execute(
                        select(Message)
                        .where(Message.room_id == room_id, Message.seq > cursor)
                        .order_by(Message.seq)
                        .limit(MESSAGE_PAGE)
                    )
                )
                .scalars()
                .all()
            )
            for message in page:
                messages.append(message)
                if message.char_end - start >= self.every:
                    return Segment(
                        level=1,
                        char_range_start=start,
                        char_range_end=message.char_end,
                        first_seq=messages[0].seq,
                        last_seq=message.seq,
                        messages=messages,
                    )
            if len(page) < MESSAGE_PAGE:
                return None
            cursor = page[-1].seq

    async def _higher_segment(
        self, session: AsyncSession, room_id: str, level: int
    ) -> Segment | None:
        start, _ = await self._level_end(session, room_id, level)
        children = (
            (
                await session.execute(
                    select(Summary)
                    .where(
                        Summary.room_id == room_id,
                        Summary.level == level - 1,
                        Summary.char_range_start >= start,
                    )
                    .order_by(Summary.char_range_start)
                    .limit(CHILDREN_PAGE)
                )
            )
            .scalars()
            .all()
        )
        total = 0
        for index, child in enumerate(children):
            total += child.char_count
            if total >= self.every:
                chosen = list(children[: index + 1])
                return Segment(
                    level=level,
                    char_range_start=chosen[0].char_range_start,
                    char_range_end=chosen[-1].char_range_end,
                    first_seq=chosen[0].first_seq,
                    last_seq=chosen[-1].last_seq,
                    children=chosen,
                )
        return None

    # --- making one summary ---

    async def _summarize(
        self, room_id: str, segment: Segment, result: CatchUpResult
    ) -> Summary | None:
        budget = self._settings.summary_input_max_chars
        data: Any = None
        completion = None
        for attempt in range(2):
            prompt, meta = await self._prompt(segment, budget)
            result.model_calls += 1
            try:
                completion = await self._runtime.complete(
                    prompt,
                    output=self._higher_output if segment.level > 1 else self._l1_output,
                    purpose=f"summary_l{segment.level}",
                    room_id=room_id,
                    max_tokens=self._settings.summary_max_tokens,
                    temperature=SUMMARY_TEMPERATURE,
                )
                data = completion.data
                break
            except LLMError as exc:
                if attempt == 0 and _context_overflow(exc):
                    budget //= 2  # the input did not fit the model: once more, half as long
                    continue
                log.warning(
                    "memory.summary.model_failed",
                    room_id=room_id,
                    level=segment.level,
                    start=segment.char_range_start,
                    error=str(exc),
                )
                result.stopped = f"model failed: {str(exc)[:300]}"
                return None
        if data is None or completion is None:
            result.stopped = "model failed: no answer"
            return None
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
        meta.update(
            provider=completion.provider,
            model=completion.model,
            fallback_used=completion.fallback_used,
        )
        proposals = [
            SameTopicProposal(p.first, p.second, p.confidence)
            for p in getattr(data, "same_topics", [])
        ]
        try:
            return await self._store(
                room_id, segment, conversation, actions, names, vectors, proposals, meta
            )
        except IntegrityError as exc:
            if await self._segment_exists(room_id, segment):
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

    async def _segment_exists(self, room_id: str, segment: Segment) -> bool:
        async with self._database.session() as session:
            found = await session.execute(
                select(Summary.id).where(
                    Summary.room_id == room_id,
                    Summary.level == segment.level,
                    Summary.char_range_start == segment.char_range_start,
                )
            )
            return found.first() is not None

    async def _store(
        self,
        room_id: str,
        segment: Segment,
        conversation: str,
        actions: str,
        names: list[str],
        vectors: Any,
        proposals: list[SameTopicProposal],
        meta: dict[str, Any],
    ) -> Summary:
        scope = room_key(room_id)
        period_start, period_end = segment.period
        async with self._database.session() as session:
            summary = Summary(
                room_id=room_id,
                level=segment.level,
                char_range_start=segment.char_range_start,
                char_range_end=segment.char_range_end,
                first_seq=segment.first_seq,
                last_seq=segment.last_seq,
                conversation_summary=conversation,
                actions_summary=actions,
                char_count=len(conversation) + len(actions),
                period_start=as_utc(period_start),
                period_end=as_utc(period_end),
                meta=meta,
                embedding_model=self._embedder.name,
                created_at=utcnow(),
            )
            session.add(summary)
            await session.flush()
            for position, child in enumerate(segment.children):
                session.add(
                    SummaryParent(summary_id=summary.id, parent_id=child.id, position=position)
                )
            await self._topics.link_names(
                session, scope=scope, summary_id=summary.id, names=names, vectors=vectors[1:]
            )
            if proposals:
                decisions = await self._topics.apply_proposals(
                    session, scope=scope, proposals=proposals, source_summary_id=summary.id
                )
                summary.meta = {**meta, "topic_decisions": [d.as_meta() for d in decisions]}
            await self._vectors.upsert(
                session,
                collection=COLLECTION,
                item_id=summary.id,
                key=scope,
                text=summary_text(summary),
                vector=vectors[0],
                model=self._embedder.name,
            )
        return summary

    async def _prompt(
        self, segment: Segment, budget: int
    ) -> tuple[list[ChatMessage], dict[str, Any]]:
        values = {
            "max_chars": str(self._settings.summary_part_max_chars),
            "max_topics": str(self._settings.topics_per_summary),
        }
        if segment.level == 1:
            names = await self._sender_names(segment.messages)
            style = TurnStyle(
                mode="summary", assistant_label=f"Assistant ({self._settings.assistant_name})"
            )
            turns = group_turns(segment.messages)
            full = render_turns(turns, names, style=style)
            body = render_turns(turns, names, style=style, max_chars=budget)
            instructions = Template(self._prompts.text("memory/summary_l1.md"))
        else:
            async with self._database.session() as session:
                topic_names = await self._topics.names_of_summaries(
                    session, [child.id for child in segment.children]
                )
            full = render_children(segment.children, topic_names, max_chars=None)
            body = render_children(segment.children, topic_names, max_chars=budget)
            instructions = Template(self._prompts.text("memory/summary_higher.md"))
        meta = {"input_chars": len(body), "trimmed": len(body) < len(full)}
        return [
            ChatMessage("system", instructions.safe_substitute(values)),
            ChatMessage("user", body),
        ], meta

    async def _sender_names(self, messages: Sequence[Message]) -> dict[int, str]:
        ids = {m.sender_id for m in messages if m.sender_id is not None}
        if not ids:
            return {}
        async with self._database.session() as session:
            rows = await session.execute(select(User.id, User.display_name).where(User.id.in_(ids)))
            return {row[0]: row[1] for row in rows}


def render_children(
    children: Sequence[Summary], topic_names: dict[str, list[str]], *, max_chars: int | None
) -> str:
    """The seed's L2+ input: "L1 Summary #n (chars a-b): Conversation / Actions", then the
    known topics. Under a budget, each part is cut evenly."""
    known = sorted({name for names in topic_names.values() for name in names})
    footer = "Known topics: " + (", ".join(known) if known else "(none)")
    part_cap: int | None = None
    if max_chars is not None and children:
        overhead = len(footer) + 120 * len(children)
        part_cap = max(40, (max_chars - overhead) // (2 * len(children)))
    blocks = []
    for number, child in enumerate(children, start=1):
        conversation, actions = child.conversation_summary, child.actions_summary
        if part_cap is not None:
            conversation, actions = clip(conversation, part_cap), clip(actions, part_cap)
        blocks.append(
            f"L{child.level} Summary #{number} (chars {child.char_range_start}-"
            f"{child.char_range_end}, {as_utc(child.period_start):%Y-%m-%d} to "
            f"{as_utc(child.period_end):%Y-%m-%d}):\n"
            f'  Conversation: "{conversation}"\n'
            f'  Actions: "{actions}"'
        )
    return "\n\n".join([*blocks, footer])


async def _room_char_end(session: AsyncSession, room_id: str) -> int:
    value = (
        await session.execute(
            select(Message.char_end)
            .where(Message.room_id == room_id)
            .order_by(Message.seq.desc())
            .limit(1)
        )
    ).scalar()
    return int(value or 0)


def _context_overflow(exc: LLMError) -> bool:
    if not isinstance(exc, AllProvidersFailed):
        return False
    return any("context" in (attempt.error or "").lower() for attempt in exc.attempts)


class SummaryHook:
    """AfterReply: catch the room's summaries up, off the request path."""

    name = "memory.summaries"

    def __init__(self, builder: SummaryBuilder) -> None:
        self._builder = builder

    async def after(self, turn: ChatTurn, reply: Message) -> None:
        if self._builder.busy(turn.room.id):
            return  # a run in progress loops until nothing is ready: it will see this reply
        if self._builder.backing_off(turn.room.id):
            return  # a recent failure: retried once summary_retry_after_s has passed
        await self._builder.catch_up(turn.room.id)
