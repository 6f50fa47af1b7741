"""`eko bench crash` through real processes, small: the accounting holds together.

Rounds of 10 posts with `eko serve` SIGKILLed mid-burst (and `eko worker` on PostgreSQL), a
restart, the audit. The kill must interrupt requests in flight (some connections die without a
status), and nothing may be lost: every stored message answered once, with its after-reply
jobs (the answer outbox, eko/chat/recovery.py). Before it, a killed round lost acknowledged
messages on both backends. The control round (nothing killed) must lose nothing either.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from eko_bench.crash import CrashOptions, RoundResult, run_backend
from eko_bench.crash.audit import RoundCounts
from tests.conftest import run_isolated

pytestmark = [pytest.mark.slow, pytest.mark.processes]

MESSAGES = 10
OPTIONS = CrashOptions(rounds=1, messages=MESSAGES, users=3, seed=3, settle_s=40.0)
# A model slow enough (each message makes several calls) that a kill within the first second
# always lands while answers are being written: the crash has something to lose.
KILLED = replace(OPTIONS, model_min_delay_s=0.8, model_max_delay_s=1.2, kill_until_s=1.0)


def _consistent(counts: RoundCounts) -> None:
    assert counts.posts == MESSAGES
    assert counts.stored <= counts.posts
    # Acknowledged means stored: the server confirmed it.
    assert counts.acknowledged <= counts.stored, counts
    assert counts.answered <= counts.stored
    assert counts.acknowledged_unanswered <= counts.acknowledged
    assert counts.acknowledged_unanswered >= counts.acknowledged - counts.answered
    assert counts.answered_twice <= counts.answered
    assert counts.replies_without_jobs <= counts.answered + counts.answered_twice
    assert counts.error_but_stored <= counts.error_status
    assert counts.acknowledged + counts.error_status + counts.no_status <= counts.posts


def _nothing_lost(counts: RoundCounts) -> None:
    _consistent(counts)
    assert counts.no_status > 0, f"the kill interrupted nothing: {counts}"
    assert counts.losses == 0, counts
    # Stored but never confirmed to the client (the kill cut the connection): answered too.
    assert counts.answered == counts.stored, counts


def _run(backend: str, workdir: Path, options: CrashOptions, pg: str | None) -> RoundResult:
    [result] = run_isolated(
        run_backend(backend, options=options, workdir=workdir, pg_server_url=pg)
    )
    return result


def test_sqlite_killed_round_adds_up(tmp_path: Path) -> None:
    result = _run("sqlite", tmp_path, KILLED, None)
    assert set(result.kills) == {"server"}
    low, high = KILLED.kill_window
    assert low <= result.kills["server"] <= high + 1.0
    _nothing_lost(result.counts)


def test_sqlite_control_round_loses_nothing(tmp_path: Path) -> None:
    result = _run("sqlite", tmp_path, replace(OPTIONS, kill=False), None)
    counts = result.counts
    assert result.kills == {}
    _consistent(counts)
    assert counts.acknowledged == counts.stored == counts.answered == MESSAGES, counts
    assert counts.losses == 0, counts
    assert counts.pending_jobs == 0


def test_postgres_killed_round_adds_up(tmp_path: Path, pg_database_url: str) -> None:
    result = _run("postgres", tmp_path, KILLED, pg_database_url)
    assert set(result.kills) == {"server", "worker"}
    _nothing_lost(result.counts)
