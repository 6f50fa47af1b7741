"""What a crash round left in the database, against what the client saw.

The database is the source of truth (as in the load bench's records.py): the user messages
the burst stored (found by their client id, the last part of the message's idempotency key),
the assistant messages replying to them (`reply_to_id`), and the after-reply jobs of each
reply, read through the JobQueue API (the `jobs` table on the local backend,
`procrastinate_jobs` on PostgreSQL). `settled_audit` waits, bounded, until the queue has
drained, every stored message is answered and the counts stop moving.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select

from eko.config import JobsSettings
from eko.jobs.after_reply import PREFIX
from eko.jobs.build import build_job_queue
from eko.jobs.registry import JobRegistry
from eko.jobs.types import JobInfo
from eko.store.db import Database
from eko.store.models import Message
from eko_bench.crash.hooks import Hook, expected_jobs
from eko_bench.crash.post import PostResult

# Far above any round's job count: list every job.
_ALL_JOBS = 1_000_000
_PENDING = ("queued", "running")


@dataclass(frozen=True)
class RoundCounts:
    posts: int = 0
    # The client saw the message stored: 201, or a stream's `message` event.
    acknowledged: int = 0
    # User messages in the database with one of the burst's client ids.
    stored: int = 0
    # Stored messages with at least one assistant reply.
    answered: int = 0
    # Acknowledged messages with no reply (or, worse, not even stored).
    acknowledged_unanswered: int = 0
    # Stored messages with more than one reply.
    answered_twice: int = 0
    # Replies to stored messages missing an after-reply job, or with one that did not succeed.
    replies_without_jobs: int = 0
    # Posts answered with an error status (4xx/5xx, 503 included) whose message was stored.
    error_but_stored: int = 0
    # Posts answered with an error status, and posts that got no status at all (the crash).
    error_status: int = 0
    no_status: int = 0
    # Replies that are the canned apology (type "fallback").
    fallback_replies: int = 0
    # After-reply jobs still queued or running when the audit was taken.
    pending_jobs: int = 0

    @property
    def losses(self) -> int:
        """Every target miss: what must be 0 once answers survive crashes."""
        return (
            self.acknowledged_unanswered
            + self.answered_twice
            + self.replies_without_jobs
            + self.error_but_stored
        )


@dataclass(frozen=True)
class _Reply:
    id: str
    type: str
    reply_to_id: str


async def _read_messages(database: Database) -> tuple[dict[str, str], list[_Reply]]:
    """Client id → user message id (from the idempotency key), and every reply."""
    async with database.session() as session:
        rows = (
            await session.execute(
                select(
                    Message.id, Message.role, Message.type, Message.dedupe_key, Message.reply_to_id
                )
            )
        ).all()
    by_client_id: dict[str, str] = {}
    replies: list[_Reply] = []
    for message_id, role, kind, dedupe_key, reply_to_id in rows:
        if role == "user":
            by_client_id[dedupe_key.rsplit(":", 1)[-1]] = message_id
        elif role == "assistant" and reply_to_id is not None:
            replies.append(_Reply(message_id, kind, reply_to_id))
    return by_client_id, replies


async def _read_jobs(database: Database) -> list[JobInfo]:
    queue = build_job_queue(JobsSettings(), database, JobRegistry())
    try:
        jobs = await queue.list_jobs(limit=_ALL_JOBS)
    finally:
        await queue.aclose()
    return [job for job in jobs if job.name.startswith(PREFIX)]


def tally(
    results: Sequence[PostResult],
    by_client_id: dict[str, str],
    replies: Sequence[_Reply],
    jobs: Sequence[JobInfo],
    hooks: tuple[Hook, ...],
) -> RoundCounts:
    """The round's counts from what the client saw and what the database holds."""
    stored_ids = {
        r.post.client_id: by_client_id[r.post.client_id]
        for r in results
        if r.post.client_id in by_client_id
    }
    wanted = set(stored_ids.values())
    ours = [reply for reply in replies if reply.reply_to_id in wanted]
    reply_count = Counter(reply.reply_to_id for reply in ours)
    succeeded: dict[str, set[str]] = defaultdict(set)
    for job in jobs:
        if job.status == "succeeded":
            succeeded[str(job.args.get("reply_id"))].add(job.name)
    without_jobs = sum(
        1 for reply in ours if expected_jobs(hooks, reply.type) - succeeded[reply.id]
    )

    def answered(client_id: str) -> bool:
        message_id = stored_ids.get(client_id)
        return message_id is not None and reply_count[message_id] > 0

    def error(result: PostResult) -> bool:
        return result.status is not None and not 200 <= result.status < 300

    return RoundCounts(
        posts=len(results),
        acknowledged=sum(r.acknowledged for r in results),
        stored=len(stored_ids),
        answered=sum(1 for message_id in stored_ids.values() if reply_count[message_id] > 0),
        acknowledged_unanswered=sum(
            1 for r in results if r.acknowledged and not answered(r.post.client_id)
        ),
        answered_twice=sum(1 for n in reply_count.values() if n > 1),
        replies_without_jobs=without_jobs,
        error_but_stored=sum(1 for r in results if error(r) and r.post.client_id in stored_ids),
        error_status=sum(1 for r in results if error(r)),
        no_status=sum(1 for r in results if r.status is None),
        fallback_replies=sum(1 for reply in ours if reply.type == "fallback"),
        pending_jobs=sum(1 for job in jobs if job.status in _PENDING),
    )


async def audit(
    database_url: str, results: Sequence[PostResult], hooks: tuple[Hook, ...]
) -> RoundCounts:
    database = Database(database_url)
    try:
        by_client_id, replies = await _read_messages(database)
        jobs = await _read_jobs(database)
    finally:
        await database.dispose()
    return tally(results, by_client_id, replies, jobs, hooks)


async def settled_audit(
    database_url: str,
    results: Sequence[PostResult],
    hooks: tuple[Hook, ...],
    *,
    bound_s: float,
    quiet_s: float = 3.0,
    poll_s: float = 0.5,
) -> tuple[RoundCounts, float]:
    """The counts once every stored message has its reply, no after-reply job is pending and
    nothing changed for `quiet_s` — or at `bound_s` whatever they are; and the seconds waited.
    (A restarted server answers what a crash left owed: the wait covers that, bounded.)"""
    began = time.monotonic()
    counts = await audit(database_url, results, hooks)
    stable_since = time.monotonic()
    while time.monotonic() - began < bound_s:
        settled = counts.pending_jobs == 0 and counts.answered >= counts.stored
        if settled and time.monotonic() - stable_since >= quiet_s:
            break
        await asyncio.sleep(poll_s)
        again = await audit(database_url, results, hooks)
        if again != counts:
            counts, stable_since = again, time.monotonic()
    return counts, time.monotonic() - began
