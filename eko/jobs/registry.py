"""Which jobs exist: a name, the code that runs it, its retry policy, whether it needs a model;
and the periodic schedules. Both backends run jobs through `JobRegistry.execute`, so a job
that needs a model is never run while every provider is down, whatever runs it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from croniter import croniter

from eko.jobs.backoff import Backoff
from eko.jobs.types import Handler, RetryLater


class UnknownJob(KeyError):
    """A job name no code is registered for (e.g. a job enqueued by a newer version)."""


@dataclass(frozen=True, slots=True)
class JobDefinition:
    name: str
    handler: Handler
    # Failed runs (errors other than RetryLater) before the job is marked failed.
    max_attempts: int = 5
    backoff: Backoff = field(default_factory=Backoff)
    # Waits (re-queued with backoff) while no model provider is reachable.
    uses_model: bool = False


@dataclass(frozen=True, slots=True)
class Schedule:
    """A periodic job: `job` is enqueued once per window of the cron expression `cron`
    (croniter syntax: 5 fields, or 6 with a trailing seconds field, as procrastinate reads it)."""

    name: str
    job: str
    cron: str
    args: dict[str, Any] | None = None


class JobRegistry:
    def __init__(self, *, model_available: Callable[[], bool] | None = None) -> None:
        self._definitions: dict[str, JobDefinition] = {}
        self._schedules: dict[str, Schedule] = {}
        # None = always available (no model runtime: tests, tools).
        self._model_available = model_available

    def register(self, definition: JobDefinition) -> JobDefinition:
        if definition.name in self._definitions:
            raise ValueError(f"job {definition.name!r} is already registered")
        self._definitions[definition.name] = definition
        return definition

    def job(
        self,
        name: str,
        *,
        max_attempts: int = 5,
        backoff: Backoff | None = None,
        uses_model: bool = False,
    ) -> Callable[[Handler], Handler]:
        """Decorator form of `register`."""

        def decorate(handler: Handler) -> Handler:
            self.register(
                JobDefinition(
                    name,
                    handler,
                    max_attempts=max_attempts,
                    backoff=backoff or Backoff(),
                    uses_model=uses_model,
                )
            )
            return handler

        return decorate

    def every(
        self, name: str, *, job: str, cron: str, args: dict[str, Any] | None = None
    ) -> Schedule:
        if not croniter.is_valid(cron):
            raise ValueError(f"invalid cron expression {cron!r} for schedule {name!r}")
        if name in self._schedules:
            raise ValueError(f"schedule {name!r} is already registered")
        schedule = Schedule(name=name, job=job, cron=cron, args=args)
        self._schedules[name] = schedule
        return schedule

    def get(self, name: str) -> JobDefinition:
        try:
            return self._definitions[name]
        except KeyError:
            raise UnknownJob(name) from None

    def __contains__(self, name: object) -> bool:
        return name in self._definitions

    @property
    def definitions(self) -> list[JobDefinition]:
        return list(self._definitions.values())

    @property
    def schedules(self) -> list[Schedule]:
        return list(self._schedules.values())

    def model_available(self) -> bool:
        return self._model_available is None or self._model_available()

    async def execute(self, name: str, args: dict[str, Any]) -> None:
        """Run one job's code. Raises RetryLater, without running it, when it needs a model
        and none is reachable (every provider's circuit breaker is open)."""
        definition = self.get(name)
        if definition.uses_model and not self.model_available():
            raise RetryLater("model_unavailable")
        await definition.handler(args)
