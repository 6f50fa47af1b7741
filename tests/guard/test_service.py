"""GuardService on both backends: lookup order, scopes, usage counts, expiry, staff operations."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from eko.guard.scope import Scope, lookup_scopes
from eko.guard.service import COLLECTION, NotLearnable
from eko.store.db import Database
from eko.store.guard_models import GuardEntry
from eko.store.models import Embedding
from tests.guard.conftest import GuardFactory, age_entry

EKO = Scope("eko")
QUESTION = "How do I reset my password on the Eko portal?"
ANSWER = "Open Settings, then Security, then Reset password."


async def _vectors(database: Database) -> int:
    async with database.session() as session:
        query = (
            select(func.count()).select_from(Embedding).where(Embedding.collection == COLLECTION)
        )
        return int((await session.execute(query)).scalar_one())


async def test_exact_match_first_then_semantic(make_guard: GuardFactory) -> None:
    guard = make_guard()
    learned = await guard.learn(question=QUESTION, answer=ANSWER, scope=EKO)
    assert learned.created and learned.entry.key_hash and learned.entry.usage_count == 0

    exact = await guard.lookup("  how do i reset my password on the eko portal ?", [EKO])
    assert exact.hit is not None and exact.hit.match == "exact" and exact.hit.score == 1.0

    # Different wording: found by cosine (hash embedder: shared words), checked, served.
    close = await guard.lookup("How do I reset my password on the Eko portal please?", [EKO])
    assert close.hit is not None and close.hit.match == "semantic"
    assert guard.threshold <= close.hit.score < 1.0
    assert close.hit.check is not None and close.hit.check.passed

    unrelated = await guard.lookup("What is the capital of Peru?", [EKO])
    assert unrelated.hit is None


async def test_usage_count_plus_two_when_strong_else_plus_one(make_guard: GuardFactory) -> None:
    guard = make_guard(threshold=0.5)
    entry = (await guard.learn(question=QUESTION, answer=ANSWER, scope=EKO)).entry
    await guard.lookup(QUESTION, [EKO])  # exact: similarity 1 -> +2
    weak = await guard.lookup("How can I reset a password on the Eko portal?", [EKO])
    assert weak.hit is not None and weak.hit.score < 0.95  # -> +1
    await guard.lookup(QUESTION, [EKO], record_use=False)  # staff search: not counted
    stored = await guard.get(entry.id)
    assert stored is not None and stored.usage_count == 3 and stored.last_used_at is not None


async def test_scopes_never_leak(make_guard: GuardFactory) -> None:
    guard = make_guard()
    await guard.learn(question=QUESTION, answer="shared answer", scope=EKO)
    await guard.learn(
        question="What is my locker code?", answer="4512", scope=Scope("eko", "alice")
    )
    # Another persona (tenant) sees nothing.
    assert (await guard.lookup(QUESTION, [Scope("lisa")])).hit is None
    # Alice sees the shared entry and her own; Bob only the shared one.
    alice = lookup_scopes("eko", "alice")
    bob = lookup_scopes("eko", "bob")
    assert (await guard.lookup("What is my locker code?", alice)).hit is not None
    assert (await guard.lookup("What is my locker code?", bob)).hit is None
    hit = (await guard.lookup(QUESTION, bob)).hit
    assert hit is not None and hit.entry.answer == "shared answer"


async def test_obsolete_and_expired_entries_are_never_served(
    make_guard: GuardFactory, database: Database
) -> None:
    guard = make_guard(max_age_days=30, auto_prune=False)
    obsolete = (await guard.learn(question=QUESTION, answer=ANSWER, scope=EKO)).entry
    await guard.mark_obsolete(obsolete.id, by="test")
    assert (await guard.lookup(QUESTION, [EKO])).hit is None
    assert (await guard.lookup(QUESTION + " now", [EKO])).hit is None

    old = (await guard.learn(question="Where is the Lyon office?", answer="Rue X", scope=EKO)).entry
    await age_entry(database, old.id, days=31)
    assert (await guard.lookup("Where is the Lyon office?", [EKO])).hit is None
    assert (await guard.lookup("Where is the Lyon office now?", [EKO])).hit is None
    # Both are still listed for audit until pruned; prune removes the expired one + its vector.
    assert (await guard.count()) == {"obsolete": 1, "active": 1}
    assert await guard.prune(dry_run=True) == 1
    assert await guard.prune() == 1
    assert await guard.get(old.id) is None
    assert await guard.get(obsolete.id) is not None
    assert await _vectors(database) == 0  # obsolete entries leave the index too


async def test_lookups_auto_prune_expired_entries(
    make_guard: GuardFactory, database: Database
) -> None:
    guard = make_guard(max_age_days=10, auto_prune=True)
    old = (await guard.learn(question=QUESTION, answer=ANSWER, scope=EKO)).entry
    await age_entry(database, old.id, days=11)
    assert (await guard.lookup("anything at all", [EKO])).hit is None
    assert await guard.get(old.id) is None
    assert await _vectors(database) == 0


async def test_newer_answer_supersedes_the_same_question(make_guard: GuardFactory) -> None:
    guard = make_guard()
    first = (await guard.learn(question=QUESTION, answer="old answer", scope=EKO)).entry
    second = (await guard.learn(question=QUESTION + "?", answer="new answer", scope=EKO)).entry
    hit = (await guard.lookup(QUESTION, [EKO])).hit
    assert hit is not None and hit.entry.id == second.id
    old = await guard.get(first.id)
    assert old is not None and old.status == "obsolete"
    assert old.meta["obsolete"] == {"reason": "superseded", "by": second.id}
    # The same question in another scope is another key: nothing superseded there.
    await guard.learn(question=QUESTION, answer="lisa answer", scope=Scope("lisa"))
    still = await guard.get(second.id)
    assert still is not None and still.status == "active"


async def test_source_message_is_learned_once(make_guard: GuardFactory) -> None:
    guard = make_guard()
    a = await guard.learn(question=QUESTION, answer=ANSWER, scope=EKO, source_message_id="m1")
    b = await guard.learn(question=QUESTION, answer=ANSWER, scope=EKO, source_message_id="m1")
    assert a.created and not b.created and a.entry.id == b.entry.id


@pytest.mark.parametrize(
    ("question", "answer", "reason"),
    [
        (QUESTION, "This is wrong <non valide>", "marked_invalid"),
        (QUESTION, "Step one, step two, and then…", "truncated"),
        ("   ", ANSWER, "empty_question"),
        (QUESTION, "", "empty_answer"),
    ],
)
async def test_invalid_pairs_are_never_stored(
    make_guard: GuardFactory, database: Database, question: str, answer: str, reason: str
) -> None:
    guard = make_guard()
    with pytest.raises(NotLearnable) as caught:
        await guard.learn(question=question, answer=answer, scope=EKO)
    assert caught.value.reason == reason
    assert await guard.count() == {} and await _vectors(database) == 0


async def test_staff_listing_filters_and_delete(
    make_guard: GuardFactory, database: Database
) -> None:
    guard = make_guard()
    a = (
        await guard.learn(question="How do I book a room?", answer="Use the form.", scope=EKO)
    ).entry
    await guard.learn(
        question="Where is 50% off_sale?", answer="Nowhere.", scope=Scope("eko", "u1")
    )
    await guard.learn(question="Who are you?", answer="Lisa.", scope=Scope("lisa"))
    items, total = await guard.list_entries(persona="eko")
    assert total == 2 and {e.scope for e in items} == {"persona:eko", "persona:eko|user:u1"}
    items, total = await guard.list_entries(text="50%")
    assert total == 1 and items[0].question.startswith("Where")
    assert (await guard.list_entries(text="_sale"))[1] == 1
    assert (await guard.list_entries(text="%"))[1] == 1  # LIKE wildcards are literal
    items, total = await guard.list_entries(limit=1)
    assert total == 3 and len(items) == 1

    await guard.record_feedback(a.id, rating="down")
    await guard.record_feedback(a.id, rating="up", previous="down")
    entry = await guard.get(a.id)
    assert entry is not None and entry.meta["feedback"] == {"up": 1, "down": 0}

    assert await guard.delete(a.id)
    assert not await guard.delete(a.id)
    assert await guard.get(a.id) is None
    assert await _vectors(database) == 2


async def test_threshold_defaults_to_the_embedders_calibration(make_guard: GuardFactory) -> None:
    assert make_guard().threshold == 0.9  # HashEmbedder.calibrated_threshold
    assert make_guard(threshold=0.85).threshold == 0.85


async def test_entry_rows(make_guard: GuardFactory, database: Database) -> None:
    guard = make_guard()
    entry = (
        await guard.learn(
            question=QUESTION, answer=ANSWER, scope=EKO, meta={"tags": ["it"], "phase": "build"}
        )
    ).entry
    async with database.session() as session:
        stored = await session.get(GuardEntry, entry.id)
        vector = (
            await session.execute(select(Embedding).where(Embedding.item_id == entry.id))
        ).scalar_one()
    assert stored is not None and stored.meta == {"tags": ["it"], "phase": "build"}
    assert stored.status == "active" and stored.scope == "persona:eko"
    assert vector.key == "persona:eko" and vector.text == QUESTION and vector.model == "hash-384"
