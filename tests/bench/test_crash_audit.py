"""`eko bench crash`'s accounting, on made-up rounds: what the client saw against the database."""

from __future__ import annotations

from collections.abc import AsyncIterator

from eko.jobs.types import JobInfo, JobStatus
from eko_bench.crash.audit import _Reply, tally
from eko_bench.crash.hooks import Hook, expected_jobs
from eko_bench.crash.options import CrashOptions
from eko_bench.crash.post import Post, PostResult, sse_events
from eko_bench.crash.stub_provider import chunks

HOOKS = (Hook("memory.extract", on_cached_reply=False), Hook("memory.turn_index", True))


def _result(i: int, status: int | None, *, acked: bool) -> PostResult:
    post = Post("room", "key", f"m{i}", f"c{i}", stream=True, as_header=False)
    return PostResult(post, status, acked, completed=False, seconds=0.1)


def _jobs(reply_id: str, *names: str, status: JobStatus = "succeeded") -> list[JobInfo]:
    args = {"reply_id": reply_id}
    return [
        JobInfo(id=i, name=f"after_reply.{name}", status=status, args=args)
        for i, name in enumerate(names)
    ]


def test_each_column_counts_what_it_says() -> None:
    results = [
        _result(0, 201, acked=True),  # answered, with both jobs
        _result(1, 201, acked=True),  # answered twice; the first reply lacks a job
        _result(2, 201, acked=True),  # stored, never answered
        _result(3, None, acked=True),  # stream cut after `message`: never stored (!)
        _result(4, None, acked=False),  # cut before anything: stored, unanswered
        _result(5, 503, acked=False),  # 503, yet stored and answered
        _result(6, 503, acked=False),  # 503, nothing stored
    ]
    stored = {"c0": "u0", "c1": "u1", "c2": "u2", "c4": "u4", "c5": "u5", "other": "ux"}
    replies = [
        _Reply("r0", "message", "u0"),
        _Reply("r1", "message", "u1"),
        _Reply("r1b", "fallback", "u1"),
        _Reply("r5", "cached_response", "u5"),
        _Reply("rx", "message", "ux"),  # not the burst's: ignored
    ]
    jobs = [
        *_jobs("r0", "memory.extract", "memory.turn_index"),
        *_jobs("r1", "memory.extract"),
        *_jobs("r1b", "memory.extract", "memory.turn_index"),
        *_jobs("r5", "memory.turn_index"),  # a cached reply needs only the hook asking for it
        *_jobs("rx", "memory.extract", status="queued"),
    ]
    counts = tally(results, stored, replies, jobs, HOOKS)
    assert counts.posts == 7
    assert counts.acknowledged == 4
    assert counts.stored == 5
    assert counts.answered == 3
    assert counts.acknowledged_unanswered == 2  # c2, and c3 which is not even stored
    assert counts.answered_twice == 1
    assert counts.replies_without_jobs == 1  # r1
    assert counts.error_status == 2
    assert counts.error_but_stored == 1
    assert counts.no_status == 2
    assert counts.fallback_replies == 1
    assert counts.pending_jobs == 1
    assert counts.losses == 2 + 1 + 1 + 1


def test_a_job_that_did_not_succeed_is_missing() -> None:
    results = [_result(0, 201, acked=True)]
    replies = [_Reply("r0", "message", "u0")]
    jobs = [
        *_jobs("r0", "memory.extract"),
        *_jobs("r0", "memory.turn_index", status="failed"),
    ]
    counts = tally(results, {"c0": "u0"}, replies, jobs, HOOKS)
    assert counts.replies_without_jobs == 1
    assert expected_jobs(HOOKS, "cached_response") == {"after_reply.memory.turn_index"}


async def _chunked(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_sse_events_are_named_once_their_frame_ends() -> None:
    stream = _chunked(
        b"event: message\ndata: {}\n",
        b'\n: a comment\n\nevent: delta\r\ndata: {"index": 0}\r\n\r\ndata: x\n\nevent: do',
        b"ne\ndata: {}\n",  # cut before its blank line: not an event yet
    )
    assert [name async for name in sse_events(stream)] == ["message", "delta", "message"]


def test_stub_chunks_join_back_to_the_text() -> None:
    text = "Voici une réponse courte du modèle de test."
    assert "".join(chunks(text)) == text
    assert len(chunks(text)) <= 4
    assert chunks("ok") == ["ok"]


def test_the_kill_window_scales_with_the_burst() -> None:
    assert CrashOptions(messages=50).kill_window == (0.3, 10.0)
    assert CrashOptions(messages=4).kill_window == (0.3, 1.0)
    assert CrashOptions(kill_until_s=2.5).kill_window == (0.3, 2.5)
