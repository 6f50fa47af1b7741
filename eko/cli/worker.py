"""`eko worker`: run background jobs in this process until SIGINT/SIGTERM (then running jobs
get EKO_JOBS_SHUTDOWN_GRACE_S to finish; unfinished ones go back to the queue)."""

from __future__ import annotations

import asyncio
import signal
from typing import Annotated

import typer

from eko.cli.common import console, load_settings, require_migrated


def worker(
    concurrency: Annotated[
        int | None, typer.Option(help="Jobs run at once (EKO_JOBS_CONCURRENCY).", min=1)
    ] = None,
) -> None:
    """Run background jobs (summaries, memory extraction, periodic housekeeping)."""
    from eko.logging import configure_logging
    from eko.wiring import build_services

    settings = load_settings(jobs_concurrency=concurrency)
    configure_logging(settings.log_level)

    async def run_until_stopped() -> None:
        services = build_services(settings)
        try:
            await require_migrated(services.database, settings)
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, stop.set)
            await services.jobs.start()
            console.print(
                f"eko worker: {services.jobs.backend} jobs backend, "
                f"concurrency {settings.jobs_concurrency}; Ctrl+C stops"
            )
            await stop.wait()
            console.print("eko worker: stopping (running jobs get a grace period)")
        finally:
            await services.aclose()

    asyncio.run(run_until_stopped())
