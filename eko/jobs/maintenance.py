"""Periodic housekeeping, scheduled as jobs: expired memory-guard entries, and the history of
finished jobs. (Proactive jobs — activity summaries, reflections — register the same way.)"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, Protocol

import structlog

from eko.jobs.registry import JobDefinition, JobRegistry

log = structlog.get_logger("eko.jobs")

PRUNE_GUARD = "maintenance.prune_guard"
PRUNE_JOBS = "maintenance.prune_jobs"


class Prunable(Protocol):
    async def prune(self, *, limit: int | None = None, dry_run: bool = False) -> int: ...


def register_maintenance(
    registry: JobRegistry,
    *,
    guard: Prunable | None,
    guard_cron: str,
    prune_jobs: Callable[[timedelta], Awaitable[int]],
    jobs_keep: timedelta,
    jobs_cron: str,
) -> None:
    if guard is not None:

        async def prune_guard(_args: dict[str, Any]) -> None:
            removed = await guard.prune()
            log.info("jobs.maintenance.guard_pruned", removed=removed)

        registry.register(JobDefinition(PRUNE_GUARD, prune_guard, max_attempts=3))
        registry.every(PRUNE_GUARD, job=PRUNE_GUARD, cron=guard_cron)

    async def prune_finished_jobs(_args: dict[str, Any]) -> None:
        removed = await prune_jobs(jobs_keep)
        log.info("jobs.maintenance.jobs_pruned", removed=removed)

    registry.register(JobDefinition(PRUNE_JOBS, prune_finished_jobs, max_attempts=3))
    registry.every(PRUNE_JOBS, job=PRUNE_JOBS, cron=jobs_cron)
