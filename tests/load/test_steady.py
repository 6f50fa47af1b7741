"""Scenario (d), steady load, through the same harness as `eko bench load --scenario d`, kept
small: counts and the figures' definitions are asserted, never timings."""

from __future__ import annotations

from pathlib import Path

import pytest

from eko_bench.load.stack import LoadOptions
from eko_bench.load.steady_report import steady_table
from eko_bench.load.steady_stack import run_steady, worker_counts

pytestmark = [pytest.mark.slow, pytest.mark.processes]

OPTIONS = LoadOptions(
    latency_s=0.2,
    steady_users=4,
    steady_seconds=3.0,
    request_timeout_s=30.0,
    settle_s=10.0,
)


def test_sqlite_runs_one_api_worker_postgres_one_and_two() -> None:
    assert worker_counts("sqlite") == (1,)
    assert worker_counts("postgres") == (1, 2)


async def test_steady_load_counts_replies_and_model_calls(tmp_path: Path) -> None:
    [result] = await run_steady("sqlite", workdir=tmp_path, options=OPTIONS)
    assert result.workers == 1 and result.users == 4
    assert result.errors == 0, result.statuses
    # Every user posted several messages one after another, each stored and answered once.
    assert result.ok >= 2 * OPTIONS.steady_users
    assert result.counts.user_messages == result.ok
    assert result.counts.replies == result.ok
    assert result.counts.unanswered == 0
    # Orchestrator + writer: two model calls per reply (extraction and summaries are off).
    assert result.calls_per_reply == 2.0
    assert result.model_seconds == pytest.approx(0.4)
    ideal = result.ideal
    assert ideal is not None
    assert ideal == pytest.approx(4 / 0.4)
    assert 0 < result.throughput < ideal
    # Added latency is the response time minus the model's: positive, and under it.
    added = result.added_seconds()
    assert len(added) == result.ok
    assert min(added) > 0
    assert result.added_percentile(0.5) is not None
    assert steady_table([result]).row_count == 1
