"""The dual context of a turn: recent raw turns + RAG over summaries + relevant facts/self.

1. Recent Conversation: the last `recent_turns` turns (user message + the assistant's answer,
   with its reasoning and tool lines), at most `recent_max_chars`, chronological.
2. Relevant Past Context: the room's summaries closest to the message, scored
   similarity × level boost × (0.5 + 0.5·e^(−age/decay)), top `rag_max_summaries`. Summaries
   that only cover the recent window are not repeated (context_rag.py).
3. Earlier in This Conversation: older turns found by words and meaning (turn_recall.py);
   a question needing several pieces is split into sub-queries (multihop.py) and the source
   turns of the facts shown are pulled in.
4. What You Know: facts and self-knowledge the caller may see (eko.memory.scopes.turn_keys).

With `memory_context_max_chars` set, the four share one budget by the rule of budget.py.

Every query is bounded (an index range with a LIMIT, or a k-nearest search), so the cost and
the size of the context stay flat however long the room grows.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import numpy as np
import structlog

from eko.config import Settings
from eko.embed.base import Embedder, EmbeddingError
from eko.memory.budget import BudgetRule, pack, shares
from eko.memory.clock import as_utc
from eko.memory.context_parts import (
    EMPTY_RECENT,
    ContextParts,
    DualContext,
    ItemPart,
    RecentPart,
    render_context,
)
from eko.memory.context_rag import SummaryRecall
from eko.memory.context_recall import ContextRecall
from eko.memory.items import ItemHit, MemoryItems
from eko.memory.multihop import MultiHop, decompose
from eko.memory.query_expansion import QueryExpander
from eko.memory.recent import RecentReader, RecentWindow
from eko.memory.relevance import item_min_score, rag_min_score
from eko.memory.scopes import turn_keys
from eko.memory.topics import Topics
from eko.memory.turn_index import TurnIndex
from eko.memory.turn_indexer import TurnIndexer
from eko.memory.turn_recall import RecalledTurn
from eko.memory.turns import ChatTurn
from eko.store.db import Database
from eko.store.models import Room, User, utcnow
from eko.store.vectors import VectorIndex

log = structlog.get_logger("eko.memory")

# The score of a fact that came with a recalled turn rather than by meaning (its rank is the
# turn's): after every fact found by meaning.
TURN_FACT_SCORE = 0.0
# Characters kept off a past budget for what `past_text` renders differently from the budget's
# own rendering (its headings are one level deeper).
PAST_MARGIN = 8


def past_overflow(parts: ContextParts, past_max_chars: int | None) -> int:
    """How many characters the past (`DualContext.past_text`) takes beyond `past_max_chars`."""
    if past_max_chars is None:
        return 0
    past = DualContext(text="", parts=parts, stats={}).past_text()
    return len(past) - past_max_chars


class DualContextBuilder:
    def __init__(
        self,
        *,
        database: Database,
        vectors: VectorIndex,
        embedder: Embedder,
        items: MemoryItems,
        topics: Topics,
        settings: Settings,
        expander: QueryExpander | None = None,
    ) -> None:
        self._database = database
        # Asked for phrases when a question needs several pieces (None: the rule alone).
        self._expander = expander
        self._embedder = embedder
        self._items = items
        self._settings = settings
        # The settings do not change during a builder's life: the budget rule is read once.
        self._rule = BudgetRule.from_settings(settings)
        self._summaries = SummaryRecall(
            database=database,
            vectors=vectors,
            embedder=embedder,
            topics=topics,
            settings=settings,
            min_score=rag_min_score(settings, embedder),
        )
        self._recent = RecentReader.from_settings(settings)
        self._turns = TurnIndex(
            vectors=vectors,
            embedder=embedder,
            assistant_name=settings.assistant_name,
            previous_chars=settings.memory_index_previous_chars,
        )
        self._indexer = TurnIndexer(self._turns, locks=database.keyed_locks)
        self._recall = ContextRecall(
            database=database,
            settings=settings,
            turns=self._turns,
            indexer=self._indexer,
            rule=self._rule,
        )
        self.item_min_score = item_min_score(settings, embedder)

    @property
    def turns(self) -> TurnIndex:
        """The room's messages as vectors (`eko memory reindex` rebuilds them)."""
        return self._turns

    @property
    def indexer(self) -> TurnIndexer:
        """What writes the room's missing vectors (after replies, imports, a context build)."""
        return self._indexer

    @property
    def rag_min_score(self) -> float:
        """The similarity below which a summary is not considered (relevance.py)."""
        return self._summaries.min_score

    @property
    def recent(self) -> RecentReader:
        """How the recent window is read: the chat path reads it once per message with this
        reader and hands it back to `build` (the writer sends what memory leaves out)."""
        return self._recent

    @property
    def rule(self) -> BudgetRule | None:
        """The configured budget rule (None: off), which also shares a reader's room
        (budget.share_reader_room)."""
        return self._rule

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    @property
    def recall(self) -> ContextRecall:
        """Step 3, the older turns (`eko bench recall` times it alone)."""
        return self._recall

    async def build_for_turn(
        self,
        turn: ChatTurn,
        window: RecentWindow | None = None,
        *,
        past_max_chars: int | None = None,
    ) -> DualContext:
        """The context for answering a stored user message (the message itself is the query,
        not part of the recent window). `window`: the message's recent window when the caller
        already read it (the chat path reads it once), else it is read here. `past_max_chars`:
        what the past (summaries, facts, recalled turns: `past_text`) may take at most — the
        room the model that reads it leaves (eko/chat/engine/writer.py)."""
        return await self.build(
            room=turn.room,
            user=turn.user,
            query=turn.user_message.content,
            before_seq=turn.user_message.seq,
            now=turn.user_message.created_at,
            message_id=turn.user_message.id,
            window=window,
            past_max_chars=past_max_chars,
        )

    async def build(
        self,
        *,
        room: Room,
        user: User,
        query: str,
        before_seq: int | None = None,
        now: datetime | None = None,
        topic: str | None = None,
        recent: bool = True,
        message_id: str | None = None,
        window: RecentWindow | None = None,
        past_max_chars: int | None = None,
    ) -> DualContext:
        """The context for `user` asking `query` in `room`, from messages before `before_seq`
        (all when None). `topic` (id or name) restricts the summaries to that topic and its
        merged aliases. `recent=False` leaves the recent window out (RAG only). `message_id`:
        the message asking, logged with the model call of a query expansion. `window`: the
        recent window already read for this message (by `self.recent`)."""
        settings = self._settings
        now = as_utc(now or utcnow())
        stats: dict[str, Any] = {}
        rule = self._rule
        if recent and window is None:
            async with self._database.session() as session:
                window = await self._recent.read(
                    session, room_id=room.id, room_kind=room.kind, before_seq=before_seq
                )
        recent_part = window.part if recent and window is not None else EMPTY_RECENT
        if rule is not None and past_max_chars is not None:
            # One budget: the past gets what the reader leaves, the recent window its own.
            rule = rule.narrowed(
                past_max_chars - PAST_MARGIN + len(render_context(ContextParts(recent_part)))
            )
            stats["past_max_chars"] = past_max_chars
        hop = (
            decompose(query)
            if settings.memory_multihop_enabled and query.strip()
            else MultiHop("single")
        )
        multihop: dict[str, Any] = {"shape": hop.shape}
        # The phrases only feed the recall of turns older than the recent window: a room with
        # none (a new conversation) costs no model call, up to its timeout on a local model.
        older_than = recent_part.first_seq if recent_part.first_seq is not None else before_seq
        if hop.needs_several and older_than is not None and older_than <= 1:
            multihop["expand_skipped"] = "no turn older than the recent window"
        elif hop.needs_several and self._expander is not None and self._expander.enabled:
            expansion = await self._expander.expand(query, room_id=room.id, message_id=message_id)
            hop = hop.with_phrases(expansion.phrases)
            multihop["phrases"] = expansion.phrases
            if expansion.error is not None:
                multihop["expand_error"] = expansion.error
        multihop["sub_queries"] = hop.sub_queries
        stats["multihop"] = multihop
        vector: np.ndarray | None = None
        sub_vectors: list[np.ndarray] = []
        if query.strip() and (
            settings.rag_max_summaries > 0
            or settings.memory_context_max_items
            or (settings.memory_recall_max_chars and settings.memory_recall_dense_k)
        ):
            try:
                vectors = await self._embedder.embed([query, *hop.sub_queries], kind="query")
                vector, sub_vectors = vectors[0], list(vectors[1:])
            except EmbeddingError as exc:
                log.warning("memory.context.embed_failed", room_id=room.id, error=str(exc))
                stats["embedding_error"] = str(exc)[:300]
        # The summaries (RAG) and the facts then older turns read apart: each in its own
        # session, at the same time (the turns pin the sources of the facts found).
        rag = (
            self._summaries.recall(room, vector, recent_part, before_seq, now, topic, stats)
            if vector is not None and settings.rag_max_summaries > 0
            else None
        )
        rag_task = asyncio.ensure_future(rag) if rag is not None else None
        try:
            items, recalled = await self._facts_and_turns(
                room, user, query, hop, vector, sub_vectors, recent_part, before_seq, stats, rule
            )
            summaries = await rag_task if rag_task is not None else []
        except BaseException:
            if rag_task is not None:
                rag_task.cancel()
                await asyncio.gather(rag_task, return_exceptions=True)
            raise
        if rule is not None:
            parts = pack(
                rule, recent=recent_part, items=items, recalled=recalled, summaries=summaries
            )
            # The past as the writer shows it fits its room: what does not, packed again in a
            # narrower budget (the rule drops pieces whole, lowest ranked first; none is cut).
            for _ in range(4):
                over = past_overflow(parts, past_max_chars)
                if over <= 0:
                    break
                rule = rule.narrowed(rule.total - over)
                parts = pack(
                    rule, recent=recent_part, items=items, recalled=recalled, summaries=summaries
                )
            stats["budget"] = rule.total
            stats["shares"] = shares(parts)
        else:
            parts = ContextParts(
                recent=recent_part, summaries=summaries, items=items, recalled=recalled
            )
        text = render_context(parts)
        stats.update(
            recent_turns=recent_part.turns,
            recent_messages=recent_part.messages,
            recent_chars=len(recent_part.text),
            summaries_used=len(parts.summaries),
            summary_levels=[s.level for s in parts.summaries],
            items_used=len(parts.items),
            recalled_turns=len(parts.recalled),
            rag_min_score=self.rag_min_score,
            chars=len(text),
        )
        return DualContext(text=text, parts=parts, stats=stats)

    async def _facts_and_turns(
        self,
        room: Room,
        user: User,
        query: str,
        hop: MultiHop,
        vector: np.ndarray | None,
        sub_vectors: list[np.ndarray],
        recent_part: RecentPart,
        before_seq: int | None,
        stats: dict[str, Any],
        rule: BudgetRule | None,
    ) -> tuple[list[ItemPart], list[RecalledTurn]]:
        """Steps 3 and 4: the facts found by meaning, then the older turns (which pin the
        facts' source turns in) and the facts drawn from those turns."""
        settings = self._settings
        items: list[ItemPart] = []
        hits: list[ItemHit] = []
        if vector is not None and settings.memory_context_max_items > 0:
            hits = await self._items.search(
                keys=turn_keys(room, user),
                vector=vector,
                kinds=("fact", "self"),
                k=settings.memory_context_max_items,
                min_score=self.item_min_score,
            )
            items = [
                ItemPart(hit.item.id, hit.item.kind, hit.item.subject, hit.item.content, hit.score)
                for hit in hits
            ]
        recalled: list[RecalledTurn] = []
        if query.strip() and settings.memory_recall_max_chars > 0:
            # Older than the recent window, which the context already shows verbatim.
            bound = recent_part.first_seq if recent_part.first_seq is not None else before_seq
            found = await self._recall.recall(
                room_id=room.id,
                query=query,
                hop=hop,
                vectors=[vector, *sub_vectors] if vector is not None else [],
                facts=hits,
                before_seq=bound,
                stats=stats,
                fact_keys=turn_keys(room, user),
                rule=rule,
            )
            recalled = found.turns
            # The facts drawn from the recalled turns: after those found by meaning.
            items += [
                ItemPart(item.id, item.kind, item.subject, item.content, TURN_FACT_SCORE)
                for item in found.facts
            ]
            stats["turn_facts"] = len(found.facts)
        return items, recalled
