"""Step 3 of the dual context, "Earlier in This Conversation": the room's older turns found by
words and meaning (turn_recall.py over the turn index), for the whole question and each of its
sub-queries (multihop.py), with the source turns of the facts already chosen pinned in.

One object so the context builder and `eko bench recall` run the same code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import structlog
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from eko.config import Settings
from eko.embed.base import EmbeddingError
from eko.memory.budget import BudgetRule
from eko.memory.date_recall import dated_turns
from eko.memory.dates import named_periods
from eko.memory.fact_links import facts_of_messages
from eko.memory.items import ItemHit
from eko.memory.multihop import LIST_NEIGHBOURS, MultiHop
from eko.memory.speakers import room_speakers
from eko.memory.turn_index import DenseHit, TurnIndex
from eko.memory.turn_indexer import TurnIndexer
from eko.memory.turn_recall import RECALL_CANDIDATES, RecalledTurn, SubQuery, recall_turns
from eko.store.db import Database
from eko.store.memory_models import MemoryItem
from eko.store.messages import seqs_of_messages

log = structlog.get_logger("eko.memory")


@dataclass(frozen=True, slots=True)
class Recalled:
    turns: list[RecalledTurn]
    # Facts drawn from those turns that the caller may see and the context did not hold yet.
    facts: list[MemoryItem] = field(default_factory=list)


class ContextRecall:
    def __init__(
        self,
        *,
        database: Database,
        settings: Settings,
        turns: TurnIndex,
        indexer: TurnIndexer,
        rule: BudgetRule | None,
    ) -> None:
        self._database = database
        self._settings = settings
        self._turns = turns
        self._indexer = indexer
        self._rule = rule

    async def recall(
        self,
        *,
        room_id: str,
        query: str,
        hop: MultiHop,
        vectors: Sequence[np.ndarray],
        facts: Sequence[ItemHit],
        before_seq: int | None,
        stats: dict[str, Any],
        fact_keys: Sequence[str] = (),
        rule: BudgetRule | None = None,
    ) -> Recalled:
        """Turns before `before_seq`, best first. `vectors`: the question's, then each of
        `hop`'s sub-queries' (empty when embedding failed: words alone still recall);
        `facts`: the facts in the context, whose source turns are pinned in; `fact_keys`: the
        scopes the caller may see, for the facts drawn from the recalled turns (none: no
        facts looked up); `rule`: this context's budget when narrower than the configured one."""
        settings = self._settings
        rule = rule or self._rule
        async with self._database.session() as session:
            turns = await self._turns_of(
                session, room_id, query, hop, vectors, facts, before_seq, stats, rule
            )
            linked: list[MemoryItem] = []
            # Facts off (no item in the context) means none drawn from turns either.
            wanted = min(settings.memory_turn_facts, settings.memory_context_max_items)
            if turns and fact_keys and wanted > 0:
                known = {hit.item.id for hit in facts}
                found = await facts_of_messages(
                    session,
                    message_ids=[i for turn in turns for i in turn.message_ids],
                    keys=fact_keys,
                    limit=wanted + len(known),
                )
                linked = [item for item in found if item.id not in known][:wanted]
            return Recalled(turns, linked)

    async def _turns_of(
        self,
        session: AsyncSession,
        room_id: str,
        query: str,
        hop: MultiHop,
        vectors: Sequence[np.ndarray],
        facts: Sequence[ItemHit],
        before_seq: int | None,
        stats: dict[str, Any],
        rule: BudgetRule | None,
    ) -> list[RecalledTurn]:
        settings = self._settings
        dense = await self._dense(session, room_id, vectors, before_seq, stats)
        subs = [
            SubQuery(text, dense[i + 1] if i + 1 < len(dense) else [])
            for i, text in enumerate(hop.sub_queries)
        ]
        pinned = (
            await source_seqs(session, room_id, facts) if settings.memory_fact_source_turns else []
        )
        stats["fact_source_turns"] = len(pinned)
        speakers = await room_speakers(
            session, room_id=room_id, assistant_name=settings.assistant_name
        )
        ignore = speakers.words()
        periods = named_periods(query) if settings.memory_recall_dates else []
        dated = (
            await dated_turns(
                session,
                dialect=self._database.dialect,
                room_id=room_id,
                query=query,
                periods=periods,
                before_seq=before_seq,
                limit=settings.memory_recall_dense_k,
                ignore=ignore,
            )
            if periods
            else []
        )
        if periods:
            stats["dates"] = [period.as_dict() for period in periods]
            stats["dated_turns"] = len(dated)
        named = speakers.named_member(query) if settings.memory_recall_named_speaker > 0 else None
        stats["named_speaker"] = named is not None
        neighbours = LIST_NEIGHBOURS if hop.shape == "list" else settings.memory_recall_neighbours
        return await recall_turns(
            session,
            dialect=self._database.dialect,
            room_id=room_id,
            query=query,
            before_seq=before_seq,
            max_chars=rule.total if rule else settings.memory_recall_max_chars,
            assistant_name=settings.assistant_name,
            dense=dense[0] if dense else [],
            sub_queries=subs,
            pinned=pinned,
            neighbours=rule.neighbours(neighbours) if rule else neighbours,
            neighbours_head=settings.memory_recall_neighbours_head,
            candidates=rule.candidates(RECALL_CANDIDATES) if rule else RECALL_CANDIDATES,
            ignore_words=ignore,
            dated=dated,
            prefer_sender=named,
            preferred_per_other=settings.memory_recall_named_speaker,
            member_names=speakers.members,
        )

    async def _dense(
        self,
        session: AsyncSession,
        room_id: str,
        vectors: Sequence[np.ndarray],
        before_seq: int | None,
        stats: dict[str, Any],
    ) -> list[list[DenseHit]]:
        """The nearest turns of each vector (the question's, then each sub-query's)."""
        settings, rule = self._settings, self._rule
        if not vectors or settings.memory_recall_dense_k <= 0:
            return []
        k = (
            rule.candidates(settings.memory_recall_dense_k)
            if rule
            else settings.memory_recall_dense_k
        )
        try:
            # The after-reply job indexes turns as they arrive; what it missed among the turns
            # this search can return (older than the recent window) is indexed first.
            if settings.memory_recall_catch_up > 0:
                stats["turns_indexed"] = await self._catch_up(session, room_id, before_seq, stats)
            return await self._turns.search(
                session, room_id=room_id, vectors=vectors, before_seq=before_seq, k=k
            )
        except EmbeddingError as exc:  # words alone still recall
            log.warning("memory.turns.embed_failed", room_id=room_id, error=str(exc))
            stats["turn_index_error"] = str(exc)[:300]
            await session.rollback()
            return []

    async def _catch_up(
        self,
        session: AsyncSession,
        room_id: str,
        before_seq: int | None,
        stats: dict[str, Any],
    ) -> int:
        """Index the missing turns the search can return, for at most
        memory_recall_catch_up_s (none while an import's job is indexing the room); returns
        how many. A safety net: when
        writing fails (the database refused it), the turns already indexed are still searched
        rather than the reply losing its memory section."""
        try:
            return await self._indexer.within(
                session,
                room_id=room_id,
                limit=self._settings.memory_recall_catch_up,
                before_seq=before_seq,
                seconds=self._settings.memory_recall_catch_up_s,
            )
        except DBAPIError as exc:
            log.warning("memory.turns.catch_up_failed", room_id=room_id, error=str(exc)[:300])
            stats["turn_index_error"] = str(exc)[:300]
            await session.rollback()
            return 0


async def source_seqs(session: AsyncSession, room_id: str, hits: Sequence[ItemHit]) -> list[int]:
    """The room's seqs of the messages the facts were learned from, in the facts' order."""
    ids = [hit.item.source_message_id for hit in hits if hit.item.source_message_id]
    if not ids:
        return []
    seq_of = await seqs_of_messages(session, room_id=room_id, message_ids=ids)
    return list(dict.fromkeys(seq_of[i] for i in ids if i in seq_of))
