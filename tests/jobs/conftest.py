"""Helpers for the jobs tests: a recorder job, and an emptied procrastinate queue."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import text

from eko.store.db import Database


@dataclass
class Recorder:
    """A job body that records its arguments, can fail N times, and tracks overlap per lock."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    failures_left: int = 0
    hold_s: float = 0.0
    running: int = 0
    max_running: int = 0

    async def __call__(self, args: dict[str, Any]) -> None:
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            if self.hold_s:
                await asyncio.sleep(self.hold_s)
            if self.failures_left > 0:
                self.failures_left -= 1
                raise RuntimeError("boom")
            self.calls.append(args)
        finally:
            self.running -= 1


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


async def empty_procrastinate(database: Database) -> None:
    if database.dialect != "postgresql":
        return
    async with database.engine.begin() as connection:
        await connection.execute(
            text(
                "TRUNCATE procrastinate_jobs, procrastinate_events, "
                "procrastinate_periodic_defers, procrastinate_workers RESTART IDENTITY CASCADE"
            )
        )


@pytest.fixture
async def clean_database(database: Database) -> AsyncIterator[Database]:
    """The `database` fixture with procrastinate's tables emptied too (they are not models,
    so the shared fixture does not truncate them)."""
    await empty_procrastinate(database)
    yield database
