"""The jobs layer's progress, published on the bus as `job.<kind>` events."""

from __future__ import annotations

from typing import Any

from eko.events.types import Event, EventBus
from eko.jobs.types import JobEventKind, JobInfo


def job_event(kind: JobEventKind, job: JobInfo) -> Event:
    data: dict[str, Any] = {
        "job_id": job.id,
        "name": job.name,
        "status": kind,
        "attempts": job.attempts,
    }
    return Event(type=f"job.{kind}", room_id=job.room_id, data=data)


class JobEventPublisher:
    def __init__(self, bus: EventBus) -> None:
        self._bus = bus

    async def __call__(self, kind: JobEventKind, job: JobInfo) -> None:
        await self._bus.publish(job_event(kind, job))
