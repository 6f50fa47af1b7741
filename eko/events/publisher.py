"""The jobs layer's progress, published on the bus as `job.<kind>` events."""

from __future__ import annotations

from eko.events.payloads import job_event
from eko.events.types import EventBus
from eko.jobs.types import JobEventKind, JobInfo


class JobEventPublisher:
    def __init__(self, bus: EventBus) -> None:
        self._bus = bus

    async def __call__(self, kind: JobEventKind, job: JobInfo) -> None:
        await self._bus.publish(job_event(kind, job))
