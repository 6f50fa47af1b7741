"""Eko under concurrent load through real sockets, on SQLite and PostgreSQL (issue 9).

The fake upstream and `eko serve` run as processes (the same harness as `eko bench load`);
these tests assert counts and statuses only, never timings:

(a) 100 distinct messages at once in one room: 100 stored, 100 answered, no 5xx;
(b) 1,000 identical posts at once (same client_message_id; then same Idempotency-Key): one
    message and one reply stored, every answer 2xx or 503, every 2xx the same exchange;
(c) a hung primary provider, 16 users at once: all 16 answered by the fallback.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from eko_bench.load.scenarios import FALLBACK, ScenarioResult
from eko_bench.load.stack import LoadOptions, run_backend
from tests.conftest import run_isolated

pytestmark = [pytest.mark.slow, pytest.mark.processes]

OPTIONS = LoadOptions(
    latency_s=0.3,
    messages=100,
    duplicates=1000,
    hung_users=16,
    hung_timeout_s=5.0,
    # Bounds, not expectations: a server that deadlocks fails here instead of hanging.
    # 1,000 requests at once on a 2-core machine shared with another test worker: the last
    # answers come late, and a client timeout here would read as a lost answer.
    request_timeout_s=120.0,
    settle_s=15.0,
    scenario_bound_s=300.0,
)


@pytest.fixture(scope="session")
def runs_by_backend() -> dict[str, dict[str, ScenarioResult]]:
    """Each backend's run, kept for the session: pytest orders the parametrized tests below so
    that a module fixture is set up again for each of them (the run took place four times)."""
    return {}


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def measured(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    runs_by_backend: dict[str, dict[str, ScenarioResult]],
) -> dict[str, ScenarioResult]:
    """Every scenario run once per backend; the tests below read the results."""
    backend = str(request.param)
    if backend not in runs_by_backend:
        pg_server_url = (
            str(request.getfixturevalue("pg_database_url")) if backend == "postgres" else None
        )
        workdir: Path = tmp_path_factory.mktemp(f"load-{backend}")
        results = run_isolated(
            run_backend(backend, workdir=workdir, options=OPTIONS, pg_server_url=pg_server_url)
        )
        runs_by_backend[backend] = {_key(result): result for result in results}
    return runs_by_backend[backend]


def _key(result: ScenarioResult) -> str:
    if result.scenario == "b":
        return "b-idempotency-key" if "Idempotency-Key" in result.label else "b-client-id"
    return result.scenario


def _explain(result: ScenarioResult) -> str:
    statuses = {str(k): v for k, v in sorted(result.statuses.items(), key=str)}
    # What "no HTTP answer" was (a timeout, a refused or reset connection) and after how long.
    no_answer = Counter(
        f"{o.error} after {o.seconds:.0f} s" for o in result.outcomes if o.status is None
    )
    return (
        f"{result.label}: statuses {json.dumps(statuses)}, no answer {dict(no_answer)}, "
        f"stored {result.counts}, notes {result.notes}\n{result.server_log}"
    )


def test_distinct_messages_are_all_stored_and_answered(
    measured: dict[str, ScenarioResult],
) -> None:
    result = measured["a"]
    assert result.requests == OPTIONS.messages
    assert result.ok == OPTIONS.messages, _explain(result)
    assert result.server_errors == 0 and result.unavailable == 0, _explain(result)
    assert result.counts.user_messages == OPTIONS.messages, _explain(result)
    assert result.counts.replies == OPTIONS.messages, _explain(result)
    assert result.counts.unanswered == 0, _explain(result)


@pytest.mark.parametrize("key", ["b-client-id", "b-idempotency-key"])
def test_identical_posts_store_one_message_and_one_reply(
    measured: dict[str, ScenarioResult], key: str
) -> None:
    result = measured[key]
    assert result.requests == OPTIONS.duplicates
    # 503 (overloaded, nothing stored) is an allowed answer to a burst; anything else is not.
    assert result.ok + result.unavailable == result.requests, _explain(result)
    assert result.ok >= 1, _explain(result)
    assert result.counts.user_messages == 1, _explain(result)
    assert result.counts.replies == 1, _explain(result)
    exchanges = {
        (o.body["user_message"]["id"], (o.body.get("assistant_message") or {}).get("id"))
        for o in result.outcomes
        if o.status is not None and 200 <= o.status < 300
    }
    assert len(exchanges) == 1, f"{len(exchanges)} different exchanges returned"


def test_a_hung_primary_leaves_every_user_answered_by_the_fallback(
    measured: dict[str, ScenarioResult],
) -> None:
    result = measured["c"]
    assert result.requests == OPTIONS.hung_users
    assert result.ok == OPTIONS.hung_users, _explain(result)
    assert result.counts.replies == OPTIONS.hung_users, _explain(result)
    assert result.counts.providers.get(FALLBACK, 0) == OPTIONS.hung_users, _explain(result)
