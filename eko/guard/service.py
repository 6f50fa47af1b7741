"""GuardService: the memory guard's cache, built from parts with one purpose each.

    lookup.py     serve: exact key, then nearest questions, threshold and false-hit check
                  (rules.py), per-language thresholds of the mode (modes.py, language.py),
                  the judge for the grey band in the judge mode (judge.py); what it
                  found, in found.py
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

from collections.abc import Mapping
from datetime import datetime

from eko.config.guard import GuardMode, GuardSettings
from eko.embed.base import Embedder
from eko.guard.agreement import GuardAgreement, Settled
from eko.guard.audit import GuardAudit
from eko.guard.entries import COLLECTION, GuardEntries
from eko.guard.found import ExactKey, Hit, Lookup, judged_meta
from eko.guard.judge import GuardJudge
from eko.guard.learn import GuardWriter, Learned, NotLearnable
from eko.guard.lookup import GuardLookup
from eko.guard.modes import GuardPolicy, build_policy
from eko.store.db import Database
from eko.store.vectors import VectorIndex

__all__ = [
    "COLLECTION",
    "ExactKey",
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
        # The operations that are one part's own, under the same name: its signature and
        # docstring (lookup.py, learn.py, audit.py, entries.py), not a copy of them.
        self.lookup = self._lookup.lookup
        self.exact_key = self._lookup.exact_key
        self.count_use = self._lookup.count_use
        self.learn = self._writer.learn
        self.by_source_message = self._writer.by_source_message
        self.learned_from = self._writer.learned_from
        self.record_feedback = self._writer.record_feedback
        self.get = self._entries.get
        self.list_entries = self._audit.list_entries
        self.mark_obsolete = self._audit.mark_obsolete
        self.delete = self._audit.delete
        self.prune = self._audit.prune
        self.count = self._audit.count

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

    async def settle_agreement(self, *, persona: str, question: str, min_users: int) -> Settled:
        """Promote (or withdraw) the shared answer to `question` by its members' votes."""
        return await self._agreement.settle(persona=persona, question=question, min_users=min_users)
