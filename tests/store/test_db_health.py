"""The background database probe behind /health."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import pytest
from structlog.testing import capture_logs

from eko.store.db import Database
from eko.store.db_health import DatabaseHealthMonitor


async def test_real_probe_reports_a_migrated_database(database: Database) -> None:
    monitor = DatabaseHealthMonitor(database)
    result = await monitor.refresh()
    assert (result.status, result.migrated, result.error) == ("ok", True, None)
    assert monitor.last is result and result.age_s() is not None


async def test_a_failing_or_hung_probe_is_an_error_not_an_exception(database: Database) -> None:
    async def broken() -> bool:
        raise ConnectionError("connection refused")

    async def hung() -> bool:
        await asyncio.Event().wait()
        return True

    failed = await DatabaseHealthMonitor(database, probe=broken).refresh()
    assert (failed.status, failed.error) == ("error", "connection refused")
    timed_out = await DatabaseHealthMonitor(database, probe=hung, timeout_s=0.05).refresh()
    assert (timed_out.status, timed_out.error) == ("error", "TimeoutError")


async def _until(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    for _ in range(int(timeout_s / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached")


async def test_running_monitor_follows_the_database_going_down(database: Database) -> None:
    up = asyncio.Event()
    up.set()

    async def probe() -> bool:
        if not up.is_set():
            raise ConnectionError("down")
        return True

    monitor = DatabaseHealthMonitor(database, probe=probe, interval_s=0.01)
    monitor.start()
    try:
        await _until(lambda: monitor.last.status == "ok")
        up.clear()
        await _until(lambda: monitor.last.status == "error")
        assert monitor.last.error == "down"
    finally:
        await monitor.aclose()
    assert not monitor.running


async def test_the_probe_logs_state_changes_only(
    database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue #37: two lines per second (alembic's context set-up on every probe) filled the
    console. Fifty probes of a healthy database log the first state only; a fall and a return
    log one line each."""
    up = True
    real = DatabaseHealthMonitor(database)

    async def probe() -> bool:
        if not up:
            raise ConnectionError("down")
        return await real._probe()

    caplog.set_level(logging.DEBUG)
    with capture_logs() as events:
        monitor = DatabaseHealthMonitor(database, probe=probe)
        for _ in range(50):
            await monitor.refresh()
        up = False
        for _ in range(5):
            await monitor.refresh()
        up = True
        await monitor.refresh()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO] == []
    assert [(e["event"], e["log_level"]) for e in events] == [
        ("database_up", "info"),
        ("database_down", "warning"),
        ("database_up", "info"),
    ]
    assert events[1]["error"] == "down"
