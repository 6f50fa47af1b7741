"""GuardService: the memory guard's cache, built from parts with one purpose each.

    lookup.py     serve: exact key, then nearest questions, threshold and false-hit check
                  (rules.py), per-language thresholds of the mode (modes.py, language.py),
                  the judge for the grey band in the judge mode (judge.py)
    learn.py      write: store a validated pair in one scope, find what was learned
    agreement.py  promote to the shared scope when K distinct users agree
    audit.py      staff: list, obsolete, delete, prune, count
    entries.py    the row primitives they share

Callers hold a GuardService (wiring builds one); the parts are not used apart. The message
pipeline goes through ConversationGuard (conversation.py: when to look up, in which scopes,
when to learn; the learning rules in replies.py), which holds this service; staff routes and
the CLI use the service directly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from eko.config.guard import GuardMode, GuardSettings
from eko.embed.base import Embedder
from eko.guard.agreement import GuardAgreement, Settled
from eko.guard.audit import GuardAudit
from eko.guard.entries import COLLECTION, GuardEntries
from eko.guard.judge import GuardJudge
from eko.guard.learn import GuardWriter, Learned, NotLearnable
from eko.guard.lookup import GuardLookup, Hit, Lookup, judged_meta
from eko.guard.modes import GuardPolicy, build_policy
from eko.guard.scope import Scope
from eko.store.db import Database
from eko.store.guard_models import GuardEntry
from eko.store.vectors import VectorIndex

__all__ = [
    "COLLECTION",
    "GuardService",
    "Hit",
    "Learned",
    "Lookup",
    "NotLearnable",
    "Settled",
    "judged_meta",
]


class GuardService:
    def __init__(
        self,
        *,
        database: Database,
        vectors: VectorIndex,
        embedder: Embedder,
        threshold: float | None = None,
        max_age_days: int = 180,
        auto_prune: bool = True,
        prune_interval_s: float = 600.0,
        false_hit_check: bool = True,
        candidates: int = 8,
        mode: GuardMode = "balanced",
        thresholds: Mapping[str, float] | None = None,
        judge_floors: Mapping[str, float] | None = None,
        judge: GuardJudge | None = None,
    ) -> None:
        """`threshold` (one value for every language) and `thresholds` (per language) override
        the mode's calibrated values; `judge` is only asked in the judge mode."""
        self._embedder = embedder
        self._entries = GuardEntries(database=database, vectors=vectors, max_age_days=max_age_days)
        self._audit = GuardAudit(entries=self._entries)
        self._writer = GuardWriter(entries=self._entries, embedder=embedder)
        self._agreement = GuardAgreement(writer=self._writer, audit=self._audit)
        self._lookup = GuardLookup(
            entries=self._entries,
            embedder=embedder,
            prune=lambda limit: self._audit.prune(limit=limit),
            policy=build_policy(
                mode,
                embedder=embedder.name,
                calibrated_threshold=float(embedder.calibrated_threshold),
                threshold=threshold,
                thresholds=thresholds,
                judge_floors=judge_floors,
            ),
            judge=judge,
            auto_prune=auto_prune,
            prune_interval_s=prune_interval_s,
            false_hit_check=false_hit_check,
            candidates=candidates,
        )

    @classmethod
    def from_settings(
        cls,
        settings: GuardSettings,
        *,
        database: Database,
        vectors: VectorIndex,
        embedder: Embedder,
        judge: GuardJudge | None = None,
    ) -> GuardService:
        """The guard its settings section describes (`judge` is kept in the judge mode only)."""
        return cls(
            database=database,
            vectors=vectors,
            embedder=embedder,
            threshold=settings.guard_threshold,
            max_age_days=settings.guard_max_age_days,
            auto_prune=settings.guard_auto_prune,
            false_hit_check=settings.guard_false_hit_check,
            candidates=settings.guard_candidates,
            mode=settings.guard_mode,
            thresholds=settings.guard_thresholds,
            judge_floors=settings.guard_judge_floors,
            judge=judge if settings.guard_mode == "judge" else None,
        )

    @property
    def threshold(self) -> float:
        """The threshold of a question whose language is not detected (see modes.py)."""
        return self._lookup.threshold

    @property
    def policy(self) -> GuardPolicy:
        """The mode and its thresholds per language."""
        return self._lookup.policy

    @property
    def embedder_name(self) -> str:
        return self._embedder.name

    @property
    def max_age_days(self) -> int:
        return self._entries.max_age_days

    def expiry_cutoff(self) -> datetime:
        return self._entries.expiry_cutoff()

    # --- lookup ---

    async def lookup(
        self,
        question: str,
        scopes: Sequence[Scope],
        *,
        record_use: bool = True,
        vector: np.ndarray | None = None,
        threshold: float | None = None,
        room_id: str | None = None,
        message_id: str | None = None,
    ) -> Lookup:
        """The entry that answers `question` in these scopes, if any (see lookup.py)."""
        return await self._lookup.lookup(
            question,
            scopes,
            record_use=record_use,
            vector=vector,
            threshold=threshold,
            room_id=room_id,
            message_id=message_id,
        )

    # --- learning ---

    async def learn(
        self,
        *,
        question: str,
        answer: str,
        scope: Scope,
        meta: Mapping[str, Any] | None = None,
        source_message_id: str | None = None,
    ) -> Learned:
        """Store a validated pair in `scope` (the caller decided the scope). Raises
        NotLearnable."""
        return await self._writer.learn(
            question=question,
            answer=answer,
            scope=scope,
            meta=meta,
            source_message_id=source_message_id,
        )

    async def by_source_message(self, message_id: str) -> GuardEntry | None:
        return await self._writer.by_source_message(message_id)

    async def learned_from(self, scope: Scope, question: str, message_id: str) -> GuardEntry | None:
        return await self._writer.learned_from(scope, question, message_id)

    async def settle_agreement(self, *, persona: str, question: str, min_users: int) -> Settled:
        """Promote (or withdraw) the shared answer to `question` by its members' votes."""
        return await self._agreement.settle(persona=persona, question=question, min_users=min_users)

    async def record_feedback(
        self, entry_id: str, *, rating: str, previous: str | None = None
    ) -> None:
        await self._writer.record_feedback(entry_id, rating=rating, previous=previous)

    # --- staff ---

    async def get(self, entry_id: str) -> GuardEntry | None:
        return await self._entries.get(entry_id)

    async def list_entries(
        self,
        *,
        scope: str | None = None,
        persona: str | None = None,
        status: str | None = None,
        text: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[list[GuardEntry], int]:
        return await self._audit.list_entries(
            scope=scope, persona=persona, status=status, text=text, limit=limit, offset=offset
        )

    async def mark_obsolete(
        self, entry_id: str, *, reason: str = "staff", by: str | None = None
    ) -> GuardEntry | None:
        return await self._audit.mark_obsolete(entry_id, reason=reason, by=by)

    async def delete(self, entry_id: str) -> bool:
        return await self._audit.delete(entry_id)

    async def prune(self, *, limit: int | None = None, dry_run: bool = False) -> int:
        return await self._audit.prune(limit=limit, dry_run=dry_run)

    async def count(self) -> dict[str, int]:
        return await self._audit.count()
