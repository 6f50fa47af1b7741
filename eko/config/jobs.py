"""Settings of background jobs (docs/deploy.md): a section of eko.config.Settings (which
inherits it, so it reads from EKO_* like every other setting)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class JobsSettings(BaseModel):
    # --- background jobs (docs/deploy.md) ---
    # auto = the in-process runner on SQLite (pending jobs persist in the database file),
    # procrastinate on PostgreSQL (run by `eko worker` processes and/or `eko serve`).
    jobs_backend: Literal["auto", "local", "procrastinate"] = "auto"
    # `eko serve` runs a job worker in its own process too, so one machine needs one command.
    # Off when separate `eko worker` processes do the work.
    jobs_worker_in_process: bool = True
    # Jobs one worker runs at once.
    jobs_concurrency: int = Field(default=2, ge=1, le=64)
    # How often a worker looks for due jobs when nothing wakes it (procrastinate is woken by
    # LISTEN/NOTIFY; a job waiting for a lock or a retry is seen at the next poll).
    jobs_poll_interval_s: float = Field(default=2.0, gt=0)
    # A running job whose worker stopped beating for this long (a killed process) is re-queued.
    jobs_stalled_after_s: float = Field(default=30.0, ge=5)
    # On shutdown, running jobs get this long to finish; then they go back to the queue.
    jobs_shutdown_grace_s: float = Field(default=10.0, ge=0)
    # A job that needs a model while every provider's circuit is open is re-queued after this
    # long, doubling each time up to its backoff cap (never failed for it).
    jobs_model_wait_s: float = Field(default=15.0, gt=0)
    # Runs of a failing job before it is marked failed (`eko jobs retry` re-queues it).
    jobs_max_attempts: int = Field(default=5, ge=1, le=100)
    # Finished jobs are kept this long (failed ones twice as long), then pruned.
    jobs_keep_days: float = Field(default=7.0, gt=0)
    # Periodic schedule (cron, UTC) of pruning finished jobs (the memory guard's expired
    # entries: guard_prune_cron in guard.py).
    jobs_prune_cron: str = "17 3 * * *"
