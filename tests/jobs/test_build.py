"""The jobs backend is chosen from its settings section (JobsSettings) and the database."""

from __future__ import annotations

from pathlib import Path

import pytest

from eko.config import JobsSettings
from eko.jobs.build import build_job_queue
from eko.jobs.local import LocalJobQueue
from eko.jobs.registry import JobRegistry
from eko.store.db import Database


async def test_auto_is_the_in_process_runner_on_sqlite(tmp_path: Path) -> None:
    database = Database(f"sqlite+aiosqlite:///{tmp_path}/eko.db")
    try:
        queue = build_job_queue(JobsSettings(jobs_concurrency=3), database, JobRegistry())
        assert isinstance(queue, LocalJobQueue)
        with pytest.raises(ValueError, match="needs a PostgreSQL database"):
            build_job_queue(JobsSettings(jobs_backend="procrastinate"), database, JobRegistry())
    finally:
        await database.dispose()
