"""The database's health, checked in the background so /health never waits on it.

A probe is a round trip on the probe connection (and a thread hop on SQLite). Under a burst
of a thousand requests each of those hops waits behind the whole event loop, so /health
answered in hundreds of milliseconds. Here one task probes every `interval_s` and /health
reads the last result, with its age, without awaiting anything. It logs only when the state
changes (up, down, migrated or not), not once per probe.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog

from eko.store.db import Database
from eko.store.migrate import is_up_to_date


@dataclass(frozen=True)
class DatabaseHealth:
    status: str  # "ok" | "error" | "unknown" (not probed yet)
    migrated: bool
    error: str | None
    checked_at: float  # time.monotonic() of the probe; 0.0 when never probed

    def age_s(self, now: float | None = None) -> float | None:
        if self.checked_at == 0.0:
            return None
        return (now if now is not None else time.monotonic()) - self.checked_at


_NEVER = DatabaseHealth(status="unknown", migrated=False, error=None, checked_at=0.0)


class DatabaseHealthMonitor:
    """Probes the database every `interval_s` (bounded by `timeout_s`) once started; `last`
    is the latest result. `refresh()` probes now (used before the loop starts and by tests)."""

    def __init__(
        self,
        database: Database,
        *,
        interval_s: float = 1.0,
        timeout_s: float = 1.0,
        probe: Callable[[], Awaitable[bool]] | None = None,
        log: Any = None,
    ) -> None:
        self._interval_s = interval_s
        self._timeout_s = timeout_s
        self._probe = probe or (lambda: is_up_to_date(database, probe=True))
        self._last = _NEVER
        self._task: asyncio.Task[None] | None = None
        self._log = log if log is not None else structlog.get_logger("eko.store")

    @property
    def last(self) -> DatabaseHealth:
        return self._last

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def refresh(self) -> DatabaseHealth:
        try:
            migrated = await asyncio.wait_for(self._probe(), self._timeout_s)
            result = DatabaseHealth("ok", migrated, None, time.monotonic())
        except Exception as exc:  # health reports whatever the database does
            error = (str(exc) or type(exc).__name__)[:200]
            result = DatabaseHealth("error", False, error, time.monotonic())
        previous, self._last = self._last, result
        if (previous.status, previous.migrated) != (result.status, result.migrated):
            self._log_change(previous, result)
        return result

    def _log_change(self, previous: DatabaseHealth, now: DatabaseHealth) -> None:
        fields = {"was": previous.status, "migrated": now.migrated}
        if now.status != "ok":
            self._log.warning("database_down", error=now.error, **fields)
        elif not now.migrated:
            self._log.warning("database_not_migrated", **fields)
        else:
            self._log.info("database_up", **fields)

    def start(self) -> None:
        if not self.running:
            self._task = asyncio.create_task(self._loop(), name="eko.db-health")

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        while True:
            await self.refresh()
            await asyncio.sleep(self._interval_s)
