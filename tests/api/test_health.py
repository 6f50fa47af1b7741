"""/health answers from the background database probe, whatever the database is doing."""

from __future__ import annotations

import asyncio
import time

from eko.store.db_health import DatabaseHealth, DatabaseHealthMonitor
from tests.api.conftest import HarnessFactory


async def test_health_reads_the_last_probe_without_waiting_on_the_database(
    make_harness: HarnessFactory,
) -> None:
    probes = 0
    hung = asyncio.Event()

    async def first_ok_then_hung() -> bool:
        nonlocal probes
        probes += 1
        if probes > 1:
            hung.set()
            await asyncio.Event().wait()
        return True

    async with make_harness() as h:
        monitor = DatabaseHealthMonitor(
            h.services.database, probe=first_ok_then_hung, interval_s=0.0, timeout_s=60.0
        )
        h.services.db_health = monitor
        monitor.start()
        try:
            await asyncio.wait_for(hung.wait(), 5)
            body = (await h.client.get("/health")).json()
            assert body["status"] == "healthy"
            assert body["database"]["status"] == "ok" and body["database"]["checked_s_ago"] >= 0
            # A result older than the staleness bound is not trusted.
            monitor._last = DatabaseHealth("ok", True, None, time.monotonic() - 60)
            stale = (await h.client.get("/health")).json()
            assert stale["status"] == "degraded" and stale["database"]["status"] == "stale"
        finally:
            await monitor.aclose()
