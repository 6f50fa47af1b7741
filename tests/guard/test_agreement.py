"""The agreement rule's pure parts: what counts as a vote, who the voters are, which answer is
published."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from eko.guard.agreement import (
    agreeing_ballots,
    answer_hash,
    ballot_meta,
    chosen_ballot,
    is_ballot,
    voters,
)
from eko.guard.normalize import key_hash
from eko.store.guard_models import GuardEntry

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def ballot(user: str | None, answer: str, minutes: int, **meta: Any) -> GuardEntry:
    scope = "persona:eko" if user is None else f"persona:eko|user:{user}"
    return GuardEntry(
        id=f"{user}-{minutes}",
        scope=scope,
        key_hash="k",
        question="q",
        answer=answer,
        meta={"validated_by": "feedback", "privacy": "shared", **meta},
        created_at=T0 + timedelta(minutes=minutes),
    )


def test_ballot_meta_carries_the_shared_key_of_the_normalized_question() -> None:
    meta = ballot_meta("eko", "How do I export?", "shared")
    assert meta == {"shared_key": key_hash("persona:eko", "how do i export"), "privacy": "shared"}


def test_only_members_votes_on_shareable_answers_count() -> None:
    assert is_ballot(ballot("bob", "a", 0))
    assert not is_ballot(ballot("bob", "a", 0, privacy="private"))  # leaned on a conversation
    assert not is_ballot(ballot("bob", "a", 0, validated_by="staff"))
    assert not is_ballot(ballot(None, "a", 0))  # a shared entry is not a vote


def test_one_user_counts_once() -> None:
    votes = [ballot("bob", "a", 0), ballot("bob", "b", 1), ballot("carol", "c", 2)]
    assert voters(votes) == {"bob", "carol"}
    assert voters(votes[:2]) == {"bob"}


def test_the_answer_most_users_chose_wins_then_the_newest() -> None:
    lobby = [ballot("bob", "same reply", 0), ballot("carol", "same reply ", 1)]
    newest_alone = ballot("dave", "another reply", 5)
    assert chosen_ballot([*lobby, newest_alone]).answer.strip() == "same reply"
    # One user voting twice for an answer does not make it more agreed.
    twice = [ballot("erin", "x", 6), ballot("erin", "x", 7)]
    assert chosen_ballot([*lobby, *twice]).answer.strip() == "same reply"
    # A tie in users: the newest answer.
    assert chosen_ballot([ballot("bob", "old", 0), ballot("carol", "new", 3)]).answer == "new"


def test_the_same_answer_is_the_same_text_up_to_spaces() -> None:
    assert answer_hash("Use File > Export.") == answer_hash("  Use File >\n Export.  ")
    assert answer_hash("Use File > Export.") != answer_hash("Use File > Import.")


def test_users_agree_only_on_one_answer() -> None:
    """Two users, two different answers: the agreeing group has one voter, not two."""
    split = [ballot("bob", "answer one", 0), ballot("carol", "answer two", 1)]
    assert len(voters(agreeing_ballots(split))) == 1
    same = [ballot("bob", "answer one", 0), ballot("carol", "answer  one", 1)]
    assert voters(agreeing_ballots(same)) == {"bob", "carol"}
    assert agreeing_ballots([]) == []
