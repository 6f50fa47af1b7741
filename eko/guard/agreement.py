"""Promotion by agreement: an answer reaches the shared scope when K distinct users validated
that same answer to its question (EKO_GUARD_SHARED_MIN_AGREEING_USERS; 0 = never).

A member's thumbs up is a *ballot*: a private entry in that member's own scope, carrying the
key its question has in the persona's shared scope (`shared_key`) and what the writer reported
about the answer (`privacy`). Only answers the writer called "shared" (no conversation, no
personal data in the prompt) are ballots: an answer that leaned on one person's conversation is
never published, whoever agrees with it. One user counts once, however many times they vote.

Users agree when they approved the same answer: ballots are grouped by the hash of their answer
text (answer_hash), and only a group of K distinct users can be published. A's 👍 on one answer
and B's 👍 on a different answer to the same question are two answers with one voter each.

Settling is idempotent and runs after every vote and every retraction: once one answer has K
distinct users (and there is no live shared entry for the question yet) that answer is copied to
the shared scope; when retractions leave the published answer with fewer than K, an entry this
rule promoted is withdrawn. Staff-validated shared entries are never touched here.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from eko.guard.audit import GuardAudit
from eko.guard.learn import GuardWriter
from eko.guard.normalize import key_hash
from eko.guard.scope import Scope
from eko.guard.validation import Privacy
from eko.store.guard_models import GuardEntry

log = structlog.get_logger("eko.guard")

SHARED_KEY = "shared_key"
PRIVACY = "privacy"
# validated_by of a member's vote, and of an entry this rule promoted.
BALLOT = "feedback"
PROMOTED = "agreement"

_SPACES = re.compile(r"\s+")


def ballot_meta(persona: str, question: str, privacy: Privacy) -> dict[str, Any]:
    """What a member's private entry records so that it can be counted as a vote."""
    return {SHARED_KEY: key_hash(Scope(persona).key, question), PRIVACY: privacy}


def is_ballot(entry: GuardEntry) -> bool:
    meta = entry.meta or {}
    return (
        meta.get("validated_by") == BALLOT
        and meta.get(PRIVACY) == "shared"
        and not Scope.parse(entry.scope).shared
    )


def voters(ballots: Sequence[GuardEntry]) -> set[str]:
    """The distinct users behind these ballots (the owners of their private scopes)."""
    return {user for b in ballots if (user := Scope.parse(b.scope).user_public_id) is not None}


def answer_hash(answer: str) -> str:
    """SHA-256 of an answer's text, NFKC with one space between words: two ballots agree when
    their hashes are equal (the same reply rated by several lobby members, or the same text)."""
    text = _SPACES.sub(" ", unicodedata.normalize("NFKC", answer)).strip()
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def by_answer(ballots: Sequence[GuardEntry]) -> dict[str, list[GuardEntry]]:
    """Ballots grouped by answer_hash: each group is one answer and the votes it got."""
    groups: dict[str, list[GuardEntry]] = defaultdict(list)
    for ballot in ballots:
        groups[answer_hash(ballot.answer)].append(ballot)
    return dict(groups)


def agreeing_ballots(ballots: Sequence[GuardEntry]) -> list[GuardEntry]:
    """The ballots of the answer most distinct users voted for; on a tie, the answer voted for
    most recently. Empty when there are no ballots."""
    if not ballots:
        return []

    def rank(group: list[GuardEntry]) -> tuple[int, Any]:
        return len(voters(group)), max(b.created_at for b in group)

    return max(by_answer(ballots).values(), key=rank)


def chosen_ballot(ballots: Sequence[GuardEntry]) -> GuardEntry:
    """The newest ballot for the answer most distinct users voted for (agreeing_ballots).
    `ballots` must not be empty."""
    return max(agreeing_ballots(ballots), key=lambda b: b.created_at)


@dataclass(frozen=True, slots=True)
class Settled:
    voters: int
    promoted: GuardEntry | None = None  # a shared entry created by this settlement
    withdrawn: GuardEntry | None = None  # a promoted entry obsoleted by this settlement


class GuardAgreement:
    def __init__(self, *, writer: GuardWriter, audit: GuardAudit) -> None:
        self._writer = writer
        self._audit = audit

    async def settle(self, *, persona: str, question: str, min_users: int) -> Settled:
        """Promote or withdraw the shared answer to `question` according to its votes."""
        if min_users <= 0:
            return Settled(0)
        shared = Scope(persona)
        found = await self._writer.live_with_meta(
            scope_prefix=f"{shared.key}|user:",
            meta_key=SHARED_KEY,
            value=key_hash(shared.key, question),
        )
        ballots = [entry for entry in found if is_ballot(entry)]
        groups = by_answer(ballots)
        agreeing = agreeing_ballots(ballots)
        count = len(voters(agreeing))
        withdrawn = None
        kept: list[GuardEntry] = []
        for entry in await self._writer.live_in_scope(shared, question):
            if (entry.meta or {}).get("validated_by") != PROMOTED:
                kept.append(entry)  # staff's answer: never touched here
                continue
            support = len(voters(groups.get(answer_hash(entry.answer), [])))
            if support >= min_users:
                kept.append(entry)
                continue
            withdrawn = await self._audit.mark_obsolete(
                entry.id, reason="agreement_withdrawn", by=f"agreement:{support}/{min_users}"
            )
            log.info("guard.agreement_withdrawn", entry_id=entry.id, voters=support)
        if kept or count < min_users:
            return Settled(count, withdrawn=withdrawn)
        promoted = await self._promote(shared, agreeing, min_users)
        return Settled(count, promoted=promoted, withdrawn=withdrawn)

    async def _promote(
        self, shared: Scope, ballots: Sequence[GuardEntry], min_users: int
    ) -> GuardEntry:
        """Publish the answer of `ballots` (all votes for one answer, from >= K users)."""
        chosen = max(ballots, key=lambda b: b.created_at)
        origin = chosen.meta or {}
        users = sorted(voters(ballots))
        meta: dict[str, Any] = {
            key: origin.get(key)
            for key in ("phase", "project", "initial_score", "tags", "intent", "source")
        }
        meta.update(
            {
                "authors": [f"user:{user}" for user in users],
                "validated_by": PROMOTED,
                "personal_context": False,
                "agreement": {
                    "users": len(users),
                    "min_users": min_users,
                    "ballots": sorted(b.id for b in ballots),
                    "chosen": chosen.id,
                    "answer_hash": answer_hash(chosen.answer),
                },
                SHARED_KEY: origin.get(SHARED_KEY),
                PRIVACY: "shared",
            }
        )
        # No source message: that message's entry is the voter's private one (unique column).
        learned = await self._writer.learn(
            question=chosen.question, answer=chosen.answer, scope=shared, meta=meta
        )
        log.info("guard.agreement_promoted", entry_id=learned.entry.id, voters=len(users))
        return learned.entry
