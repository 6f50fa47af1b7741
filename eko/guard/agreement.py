"""Promotion by agreement: a question's answer reaches the shared scope when K distinct users
validated answers to it (EKO_GUARD_SHARED_MIN_AGREEING_USERS; 0 = never).

A member's thumbs up is a *ballot*: a private entry in that member's own scope, carrying the
key its question has in the persona's shared scope (`shared_key`) and what the writer reported
about the answer (`privacy`). Only answers the writer called "shared" (no conversation, no
personal data in the prompt) are ballots: an answer that leaned on one person's conversation is
never published, whoever agrees with it. One user counts once, however many times they vote.

Settling is idempotent and runs after every vote and every retraction: at K distinct users (and
no live shared entry for the question yet) the most agreed answer is copied to the shared scope;
when retractions leave fewer than K, an entry this rule promoted is withdrawn. Staff-validated
shared entries are never touched here.
"""

from __future__ import annotations

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


def chosen_ballot(ballots: Sequence[GuardEntry]) -> GuardEntry:
    """The answer most distinct users voted for (the same text: several members rating one
    lobby reply); on a tie, the newest. `ballots` must not be empty."""
    by_answer: dict[str, list[GuardEntry]] = defaultdict(list)
    for ballot in ballots:
        by_answer[ballot.answer.strip()].append(ballot)

    def rank(group: list[GuardEntry]) -> tuple[int, Any]:
        return len(voters(group)), max(b.created_at for b in group)

    best = max(by_answer.values(), key=rank)
    return max(best, key=lambda b: b.created_at)


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
        count = len(voters(ballots))
        current = await self._writer.live_in_scope(shared, question)
        if count >= min_users:
            if current:
                return Settled(count)  # staff's answer, or one promoted already: kept
            return Settled(count, promoted=await self._promote(shared, ballots, min_users))
        withdrawn = None
        for entry in current:
            if (entry.meta or {}).get("validated_by") == PROMOTED:
                withdrawn = await self._audit.mark_obsolete(
                    entry.id, reason="agreement_withdrawn", by=f"agreement:{count}/{min_users}"
                )
                log.info("guard.agreement_withdrawn", entry_id=entry.id, voters=count)
        return Settled(count, withdrawn=withdrawn)

    async def _promote(
        self, shared: Scope, ballots: Sequence[GuardEntry], min_users: int
    ) -> GuardEntry:
        chosen = chosen_ballot(ballots)
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
