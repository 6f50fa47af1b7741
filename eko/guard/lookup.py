"""Lookup: the entry that answers a question in the asker's scopes, if any.

Order (spec): the exact key (SHA-256 of scope + normalized question) first, then the nearest
stored questions of the same scopes by cosine, served at or above the threshold when the
false-hit check agrees. No model is ever called here; the only model is the embedder.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession

from eko.embed.base import Embedder
from eko.guard.check import CheckResult, false_hit_check
from eko.guard.decide import Candidate, Decision, Judged, decide
from eko.guard.entries import COLLECTION, GuardEntries, count_use
from eko.guard.normalize import key_hash, normalize_question
from eko.guard.scope import Scope
from eko.store.guard_models import GuardEntry

# Expired entries deleted by one lookup's auto-prune.
PRUNE_BATCH = 500


@dataclass(frozen=True, slots=True)
class Hit:
    entry: GuardEntry
    score: float
    match: str  # "exact" | "semantic"
    check: CheckResult | None

    def as_meta(self, threshold: float) -> dict[str, Any]:
        """What a cached_response message records about where its answer came from."""
        return {
            "entry_id": self.entry.id,
            "score": round(self.score, 4),
            "match": self.match,
            "threshold": threshold,
            "scope": Scope.parse(self.entry.scope).kind,
            "check": None if self.check is None else self.check.as_meta(),
        }


@dataclass(frozen=True, slots=True)
class Lookup:
    hit: Hit | None
    threshold: float
    decision: Decision[GuardEntry] | None  # None when the exact key answered


class GuardLookup:
    def __init__(
        self,
        *,
        entries: GuardEntries,
        embedder: Embedder,
        prune: Callable[[int], Awaitable[int]],
        threshold: float | None = None,
        auto_prune: bool = True,
        prune_interval_s: float = 600.0,
        false_hit_check: bool = True,
        candidates: int = 8,
    ) -> None:
        self._entries = entries
        self._embedder = embedder
        self._prune = prune
        self._threshold = threshold
        self.auto_prune = auto_prune
        self.prune_interval_s = prune_interval_s
        self.check_enabled = false_hit_check
        self.candidates = candidates
        self._next_prune = 0.0  # monotonic seconds

    @property
    def threshold(self) -> float:
        """The configured cosine threshold, else the embedder's calibrated one.

        A threshold only means something for one embedding model (see docs/guard.md).
        """
        if self._threshold is not None:
            return self._threshold
        return float(self._embedder.calibrated_threshold)

    async def lookup(
        self,
        question: str,
        scopes: Sequence[Scope],
        *,
        record_use: bool = True,
        vector: np.ndarray | None = None,
        threshold: float | None = None,
    ) -> Lookup:
        """The entry that answers `question` in these scopes, if any.

        `record_use` counts the hit in usage_count (a real answer, not a staff search).
        `vector` skips embedding (the benchmark passes precomputed ones).
        """
        threshold = self.threshold if threshold is None else threshold
        if not scopes or not normalize_question(question):
            return Lookup(None, threshold, None)
        if self.auto_prune and time.monotonic() >= self._next_prune:
            self._next_prune = time.monotonic() + self.prune_interval_s
            await self._prune(PRUNE_BATCH)
        keys = [scope.key for scope in scopes]
        async with self._entries.database.session() as session:
            exact = await self._exact(session, question, scopes)
            if exact is not None:
                if record_use:
                    await count_use(session, exact.id, 1.0)
                return Lookup(Hit(exact, 1.0, "exact", None), threshold, None)
        if vector is None:
            # Outside any transaction: no lock is held while the model runs.
            vector = (await self._embedder.embed([question], kind="query"))[0]
        async with self._entries.database.session() as session:
            found = await self._entries.vectors.search(
                session,
                collection=COLLECTION,
                model=self._embedder.name,
                keys=keys,
                query=vector,
                k=self.candidates,
            )
            scores = {hit.item_id: hit.score for hit in found}
            entries = await self._live_entries(session, list(scores), keys)
            candidates = [
                Candidate(entry, entry.question, scores[entry.id], entry.created_at)
                for entry in entries
            ]
            decision = decide(
                question,
                candidates,
                threshold=threshold,
                check=false_hit_check if self.check_enabled else None,
            )
            served = decision.served
            if served is None:
                return Lookup(None, threshold, decision)
            entry = served.candidate.item
            if record_use:
                await count_use(session, entry.id, served.candidate.score)
            return Lookup(
                Hit(entry, served.candidate.score, "semantic", served.check), threshold, decision
            )

    async def _exact(
        self, session: AsyncSession, question: str, scopes: Sequence[Scope]
    ) -> GuardEntry | None:
        hashes = [key_hash(scope.key, question) for scope in scopes]
        result = await session.execute(
            self._entries.live()
            .where(
                GuardEntry.key_hash.in_(hashes),
                GuardEntry.scope.in_([scope.key for scope in scopes]),
            )
            .order_by(GuardEntry.created_at.desc(), GuardEntry.id)
            .limit(1)
        )
        return result.scalar_one_or_none()

    async def _live_entries(
        self, session: AsyncSession, ids: list[str], keys: list[str]
    ) -> Sequence[GuardEntry]:
        if not ids:
            return []
        # The scope filter is repeated here on purpose: the index filtered by key already, but
        # an entry is only ever served from a scope the asker may read.
        result = await session.execute(
            self._entries.live().where(GuardEntry.id.in_(ids), GuardEntry.scope.in_(keys))
        )
        return result.scalars().all()


def judged_meta(judged: Judged[GuardEntry]) -> dict[str, Any]:
    """One candidate of a lookup, for staff search results."""
    return {
        "entry_id": judged.candidate.item.id,
        "score": round(judged.candidate.score, 4),
        "above_threshold": judged.above_threshold,
        "check": None if judged.check is None else judged.check.as_meta(),
        "servable": judged.servable,
    }
