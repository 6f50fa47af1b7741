"""What one lookup costs the database: a serving lookup reads only the rows it could serve
(none for a miss), in one transaction, the question embedded before it and the exact key read
before that (by the caller, or in a transaction of its own); a staff search still sees every
candidate."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from sqlalchemy import event, select

from eko.embed.hashing import HashEmbedder
from eko.guard.scope import Scope
from eko.store.db import Database
from eko.store.guard_models import GuardEntry
from tests.guard.conftest import GuardFactory

EKO = Scope("eko")
STORED = "How do I reset my password on the Eko portal?"
CLOSE = "How do I reset my password on the Eko portal please?"
FAR = "How do I export my invoices from the Eko portal as a spreadsheet?"


@contextmanager
def statements(database: Database) -> Iterator[list[str]]:
    """The SQL statements that touch guard_entries (the vector index's own are left out: it
    may be the database's or the in-memory one) and the commits, as "COMMIT"."""
    seen: list[str] = []
    engine = database.engine.sync_engine

    def on_execute(*args: object) -> None:
        sql = str(args[2])
        if "guard_entries" in sql:
            seen.append(sql.split(None, 1)[0].upper())

    def on_commit(*_: object) -> None:
        seen.append("COMMIT")

    event.listen(engine, "before_cursor_execute", on_execute)
    event.listen(engine, "commit", on_commit)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", on_execute)
        event.remove(engine, "commit", on_commit)


async def test_a_miss_reads_no_row_and_a_staff_search_sees_every_candidate(
    make_guard: GuardFactory, database: Database
) -> None:
    guard = make_guard(threshold=0.9)
    await guard.learn(question=STORED, answer="Settings, then Security.", scope=EKO)
    vector = (await HashEmbedder().embed([FAR]))[0]
    await guard.lookup(FAR, [EKO], vector=vector)  # warm: the index loads its partition
    with statements(database) as seen:
        miss = await guard.lookup(FAR, [EKO], vector=vector)
    assert miss.hit is None and miss.decision is not None
    assert miss.decision.judged == []  # below the threshold: no row read
    # The exact key only, in one transaction.
    assert seen == ["SELECT", "COMMIT"]

    staff = await guard.lookup(FAR, [EKO], vector=vector, record_use=False)
    assert staff.hit is None and staff.decision is not None
    assert [j.candidate.item.question for j in staff.decision.judged] == [STORED]
    assert not staff.decision.judged[0].above_threshold


async def test_a_hit_is_read_and_counted_in_one_transaction(
    make_guard: GuardFactory, database: Database
) -> None:
    guard = make_guard(threshold=0.9)
    learned = await guard.learn(question=STORED, answer="Settings, then Security.", scope=EKO)
    vector = (await HashEmbedder().embed([CLOSE]))[0]
    await guard.lookup(FAR, [EKO], record_use=False)  # warm
    with statements(database) as seen:
        hit = await guard.lookup(CLOSE, [EKO], vector=vector)
    assert hit.hit is not None and hit.hit.match == "semantic"
    assert hit.hit.entry.id == learned.entry.id
    # The exact key, the candidate's row, its usage count: one transaction.
    assert seen == ["SELECT", "SELECT", "UPDATE", "COMMIT"]
    # Without a vector: the exact key first, in a transaction of its own (an exact hit is
    # served with no embedding); then the embedder, outside any; then the search's.
    with statements(database) as seen:
        again = await guard.lookup(CLOSE, [EKO])
    assert again.hit is not None and seen == ["SELECT", "COMMIT", "SELECT", "UPDATE", "COMMIT"]
    # The exact key read by the caller in its own transaction (the chat: with the recent
    # window): the lookup's one transaction reads the candidate and counts it.
    async with database.session() as session:
        exact = await guard.exact_key(session, CLOSE, [EKO])
    assert exact is not None and exact.entry_id is None
    with statements(database) as seen:
        third = await guard.lookup(CLOSE, [EKO], exact=exact)
    assert third.hit is not None and seen == ["SELECT", "UPDATE", "COMMIT"]
    async with database.session() as session:
        entry = (
            await session.execute(select(GuardEntry).where(GuardEntry.id == learned.entry.id))
        ).scalar_one()
    # Both uses counted (a hit ≥ 0.95 counts twice, below once).
    assert entry.usage_count >= 2 and entry.last_used_at is not None
    assert np.isfinite(hit.hit.score)
