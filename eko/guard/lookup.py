"""Lookup: the entry that answers a question in the asker's scopes, if any.

Order (spec): a deictic question ("what does this mean?") is never served; then the exact key
(SHA-256 of scope + normalized question) — read before the question is embedded, so an exact
hit costs no embedding (the message pipeline reads it in a transaction it runs anyway,
`exact_key`), then the nearest stored questions of the same scopes
by cosine, served at or above the threshold of the question's language when the false-hit
check agrees and the entry is in the question's language (language.py: a French question is
never answered from an English entry, nor the other way round, unless the entry is marked
multilingual; so the French threshold only ever applies to French entries). In the `judge`
mode only, the best candidate of the grey band just below that threshold that passed the
check goes to the judge model (one call at most); otherwise no model is called here, the only
model being the embedder.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import cast

import numpy as np
from sqlalchemy import bindparam, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from eko.embed.base import Embedder
from eko.guard.check import CheckResult, false_hit_check
from eko.guard.decide import Candidate, CheckFn, Decision, decide
from eko.guard.entries import COLLECTION, GuardEntries, count_use
from eko.guard.found import ExactKey, Hit, Lookup
from eko.guard.judge import GuardJudge, JudgeVerdict
from eko.guard.language import Language, detect_language, serves_language
from eko.guard.modes import GuardPolicy, build_policy
from eko.guard.normalize import key_hash, normalize_question
from eko.guard.rules import is_deictic
from eko.guard.scope import Scope
from eko.guard.validation import lookup_refusal
from eko.store.guard_models import GuardEntry

# Expired entries deleted by one lookup's auto-prune.
PRUNE_BATCH = 500
_ENTRIES = GuardEntry.__table__.c
# The exact key among live entries (as GuardEntries.live(): active, not expired), built once.
_EXACT = (
    select(_ENTRIES.id)
    .where(
        _ENTRIES.key_hash.in_(bindparam("hashes", expanding=True)),
        _ENTRIES.scope.in_(bindparam("scopes", expanding=True)),
        _ENTRIES.status == "active",
        _ENTRIES.created_at >= bindparam("cutoff"),
    )
    .order_by(_ENTRIES.created_at.desc(), _ENTRIES.id)
    .limit(1)
)


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
        policy: GuardPolicy | None = None,
        judge: GuardJudge | None = None,
    ) -> None:
        self._entries = entries
        self._embedder = embedder
        self._prune = prune
        self.policy = policy or build_policy(
            "balanced",
            embedder=embedder.name,
            calibrated_threshold=float(embedder.calibrated_threshold),
            threshold=threshold,
        )
        self.judge = judge
        self.auto_prune = auto_prune
        self.prune_interval_s = prune_interval_s
        self.check_enabled = false_hit_check
        self.candidates = candidates
        self._next_prune = 0.0  # monotonic seconds

    @property
    def threshold(self) -> float:
        """The threshold of a question whose language is not detected (the default).

        A threshold only means something for one embedding model and one language (see
        docs/guard.md); `lookup` applies the one of the question's language.
        """
        return self.policy.threshold("und")

    def _refused(self, question: str, scopes: Sequence[Scope]) -> str | None:
        """Why `question` is not looked up at all ("" for an empty one or no scope)."""
        if not scopes or not normalize_question(question):
            return ""
        if (refusal := lookup_refusal(question)) is not None:
            return refusal  # a statement, a greeting, a thanks
        if self.check_enabled and is_deictic(question):
            return "deictic"
        return None

    async def exact_key(
        self, session: AsyncSession, question: str, scopes: Sequence[Scope]
    ) -> ExactKey | None:
        """The exact key of `question`, read in the caller's transaction (one statement); None
        (nothing read) when `lookup` would not look the question up."""
        if self._refused(question, scopes) is not None:
            return None
        entry_id = await self._exact_id(session, question, scopes)
        entry = None if entry_id is None else await session.get(GuardEntry, entry_id)
        if entry is not None and not self._is_live(entry, {scope.key for scope in scopes}):
            entry = None
        return ExactKey(entry_id, entry)

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
        exact: ExactKey | None = None,
        counted_by_caller: bool = False,
    ) -> Lookup:
        """The entry that answers `question` in these scopes, if any.

        `record_use` counts the hit in usage_count (a real answer, not a staff search).
        `vector` skips embedding (the benchmark passes precomputed ones). `threshold` replaces
        the language's (a staff search trying another value; no judge then). `room_id` and
        `message_id` name the judge's model call in llm_calls. `exact`: the exact key as the
        caller read it (`exact_key`, with the same question and scopes). `counted_by_caller`:
        a hit is not counted here; the caller counts it (`count_use`) in its own transaction
        (the chat: with the reply that serves it).
        """
        language = detect_language(question)
        floor = self.policy.judge_floor(language) if threshold is None else None
        threshold = self.policy.threshold(language) if threshold is None else threshold
        found = Lookup(None, threshold, None, language=language, mode=self.policy.mode)
        if (refusal := self._refused(question, scopes)) is not None:
            return replace(found, refused=refusal or None)
        if self.auto_prune and time.monotonic() >= self._next_prune:
            self._next_prune = time.monotonic() + self.prune_interval_s
            await self._prune(PRUNE_BATCH)
        keys = [scope.key for scope in scopes]
        # Serving reads only the rows that could be served or judged (most lookups: none);
        # a staff search or the benchmark (record_use False) sees every candidate.
        cutoff = min(threshold, floor if floor is not None else threshold) if record_use else None
        counts = record_use and not counted_by_caller
        # The exact key first: an exact hit is served without embedding the question. The
        # question is embedded outside any transaction; then one transaction for the search,
        # the rows and the usage count (with the exact key in it when the vector was given).
        if exact is None and vector is None:
            async with self._entries.database.session() as session:
                exact = await self.exact_key(session, question, scopes)
        if exact is not None and exact.entry is not None:
            if counts:
                async with self._entries.database.session() as session:
                    await self._count_use(session, exact.entry.id, 1.0)
            return replace(found, hit=Hit(exact.entry, 1.0, "exact", None))
        if vector is None:
            vector = (await self._embedder.embed([question], kind="query"))[0]
        async with self._entries.database.session() as session:
            if exact is None and (entry_id := await self._exact_id(session, question, scopes)):
                hit = await self._serve_exact(session, entry_id, keys, counts)
                if hit is not None:
                    return replace(found, hit=hit)
            decision, hit = await self._semantic(
                session, question, language, keys, vector, threshold, cutoff, counts
            )
        found = replace(found, decision=decision)
        if hit is None and floor is not None and self.judge is not None:
            hit, verdict = await self._judged(
                question, language, decision, floor, room_id, message_id
            )
            found = replace(found, judge=verdict)
            if hit is not None and counts:
                async with self._entries.database.session() as session:
                    await self._count_use(session, hit.entry.id, hit.score)
        return found if hit is None else replace(found, hit=hit)

    async def _serve_exact(
        self, session: AsyncSession, entry_id: str, keys: list[str], record_use: bool
    ) -> Hit | None:
        """The entry the exact key named, counted; None when no longer live in these scopes
        (obsoleted or expired since the key was read: the lookup goes on by meaning)."""
        entry = await session.get(GuardEntry, entry_id)
        if entry is None or not self._is_live(entry, set(keys)):
            return None
        if record_use:
            await self._count_use(session, entry.id, 1.0)
        return Hit(entry, 1.0, "exact", None)

    async def _semantic(
        self,
        session: AsyncSession,
        question: str,
        language: Language,
        keys: list[str],
        vector: np.ndarray,
        threshold: float,
        cutoff: float | None,
        record_use: bool,
    ) -> tuple[Decision[GuardEntry], Hit | None]:
        """The nearest stored questions, decided; a served one counted in this transaction."""
        hits = await self._entries.vectors.search(
            session,
            collection=COLLECTION,
            model=self._embedder.name,
            keys=keys,
            query=vector,
            k=self.candidates,
            min_score=cutoff,
        )
        scores = {hit.item_id: hit.score for hit in hits}
        entries = await self._live_entries(session, list(scores), keys)
        candidates = [
            Candidate(entry, entry.question, scores[entry.id], entry.created_at)
            for entry in entries
        ]
        decision = decide(
            question, candidates, threshold=threshold, check=self._check(language, entries)
        )
        if decision.served is None:
            return decision, None
        served = decision.served
        hit = Hit(served.candidate.item, served.candidate.score, "semantic", served.check)
        if record_use:
            await self._count_use(session, hit.entry.id, hit.score)
        return decision, hit

    def _check(self, language: Language, entries: Sequence[GuardEntry]) -> CheckFn:
        """The language gate, then the false-hit check when it is on."""
        multilingual = {e.question for e in entries if (e.meta or {}).get("multilingual") is True}

        def check(question: str, stored: str) -> CheckResult:
            if not serves_language(language, stored, multilingual=stored in multilingual):
                return language_mismatch(language, stored)
            return false_hit_check(question, stored) if self.check_enabled else CheckResult(True)

        return check

    async def _judged(
        self,
        question: str,
        language: Language,
        decision: Decision[GuardEntry],
        floor: float,
        room_id: str | None,
        message_id: str | None,
    ) -> tuple[Hit | None, JudgeVerdict | None]:
        """Ask the judge about the best grey-band candidate that passes the check (one call)."""
        assert self.judge is not None
        for judged in decision.judged:
            candidate = judged.candidate
            if judged.above_threshold or candidate.score < floor:
                continue
            result: CheckResult | None = self._check(language, [candidate.item])(
                question, candidate.question
            )
            if result is not None and result.passed and not self.check_enabled:
                result = None
            if result is not None and not result.passed:
                continue
            verdict = await self.judge.same(
                question, candidate.question, room_id=room_id, message_id=message_id
            )
            if verdict.same:
                return Hit(candidate.item, candidate.score, "judged", result, verdict), verdict
            return None, verdict
        return None, None

    async def count_use(self, session: AsyncSession, entry_id: str, score: float) -> None:
        """Count a hit served by a `counted_by_caller` lookup, in the caller's transaction."""
        await count_use(session, entry_id, score)

    async def _count_use(self, session: AsyncSession, entry_id: str, score: float) -> None:
        """Count a served answer. On PostgreSQL its commit does not wait for the WAL flush
        (about 10 ms, most of a hit's time): a crash may lose the last uses counted, no row."""
        if self._entries.database.dialect == "postgresql":
            await session.execute(text("SET LOCAL synchronous_commit = off"))
        await count_use(session, entry_id, score)

    async def _exact_id(
        self, session: AsyncSession, question: str, scopes: Sequence[Scope]
    ) -> str | None:
        """The id of the live entry stored under this exact key, newest first, by a prepared
        Core statement (most lookups find none)."""
        result = await session.execute(
            _EXACT,
            {
                "hashes": [key_hash(scope.key, question) for scope in scopes],
                "scopes": [scope.key for scope in scopes],
                "cutoff": self._entries.expiry_cutoff(),
            },
        )
        return cast("str | None", result.scalar_one_or_none())

    def _is_live(self, entry: GuardEntry, allowed: set[str]) -> bool:
        cutoff = self._entries.expiry_cutoff()
        return entry.status == "active" and entry.created_at >= cutoff and entry.scope in allowed

    async def _live_entries(
        self, session: AsyncSession, ids: list[str], keys: list[str]
    ) -> Sequence[GuardEntry]:
        if not ids:
            return []
        # Read by primary key only, then filtered here: with the status, age and scope in the
        # WHERE clause SQLite's planner scanned the whole scope (150 ms at 30k entries instead
        # of 20). The scope check is repeated on purpose: the index filtered by key already, but
        # an entry is only ever served from a scope the asker may read.
        rows = await session.execute(select(GuardEntry).where(GuardEntry.id.in_(ids)))
        allowed = set(keys)
        return [entry for entry in rows.scalars() if self._is_live(entry, allowed)]


def language_mismatch(language: Language, stored: str) -> CheckResult:
    """The check's verdict on an entry in another language than the question's."""
    details = {"language": {"question": language, "entry": detect_language(stored)}}
    return CheckResult(False, ("language",), details)
