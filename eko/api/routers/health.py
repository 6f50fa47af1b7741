"""GET /health: the seed's shape (status, environment, version, timestamp) plus each part."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter

from eko import __version__
from eko.api.deps import ServicesDep
from eko.llm.priority import PriorityGate

router = APIRouter(tags=["health"])

# Past this age the background probe is stuck or not running: report it, do not trust it.
_DB_CHECK_STALE_S = 5.0
# A local call running this many times longer than the recent average makes the model busy.
_LONG_CALL_FACTOR = 2.0


@router.get("/health")
async def health(services: ServicesDep) -> dict[str, Any]:
    database: dict[str, Any] = {"backend": services.database.dialect}
    monitor = services.db_health
    # Normally the monitor probes in the background and nothing here awaits, so /health
    # answers within one turn of the event loop however busy it is. Without the lifespan
    # (an app built around injected services) it probes now.
    checked = monitor.last if monitor.running else await monitor.refresh()
    age = checked.age_s()
    database["status"] = checked.status
    database["migrated"] = checked.migrated
    database["checked_s_ago"] = round(age, 3) if age is not None else None
    if checked.error is not None:
        database["error"] = checked.error
    if checked.status == "ok":
        database["vectors"] = services.vectors.backend
    if age is None or age > _DB_CHECK_STALE_S:
        database["status"] = "stale"
    database["pool"] = services.database.pool_status()
    try:
        dim: int | None = services.embedder.dim
    except Exception:  # a remote embedder learns its dimension from its first answer
        dim = None
    breakers = {b.provider: b for b in services.runtime.breakers()}
    providers: list[dict[str, Any]] = []
    for provider in services.providers:
        breaker = breakers.get(provider.name)
        circuit = breaker.state if breaker is not None else "closed"
        entry: dict[str, Any] = {
            "name": provider.name,
            "model": provider.model,
            "circuit": circuit,
            "retry_in_s": breaker.retry_in_s if breaker is not None else 0.0,
        }
        gate = getattr(provider, "gate", None)
        if isinstance(gate, PriorityGate):
            entry["queue"] = queue_of(gate)
        entry["state"] = provider_state(circuit, entry.get("queue"))
        providers.append(entry)
    model = {
        # The model that answers: down (its circuit is open on real failures), busy (people
        # wait in its line, or its call has run long: slow, not broken), or up.
        "status": providers[0]["state"] if providers else "up",
        "providers": providers,
        "embedder": {"name": services.embedder.name, "dim": dim},
    }
    # The primary model is the one that answers: while its circuit is not closed (open, or
    # waiting for the probe that would close it) replies come from a fallback or not at all.
    primary_up = not providers or providers[0]["circuit"] == "closed"
    healthy = database["status"] == "ok" and database.get("migrated", False) and primary_up
    return {
        "status": "healthy" if healthy else "degraded",
        "environment": services.settings.environment,
        "version": __version__,
        "timestamp": datetime.now(UTC).isoformat(),
        "database": database,
        "model": model,
        "load": {
            "messages_in_flight": services.chat.inflight,
            "jobs_backend": services.jobs.backend,
        },
    }


def queue_of(gate: PriorityGate) -> dict[str, Any]:
    """A local model's line: people and background calls waiting, the call in flight."""
    return {
        "waiting": gate.waiting("interactive"),
        "background_waiting": gate.waiting("background"),
        "running": gate.held,
        "running_s": round(gate.held_for_s, 1),
        "average_call_s": round(gate.average_hold_s, 1),
    }


def provider_state(circuit: str, queue: dict[str, Any] | None) -> str:
    """down: its circuit is open (real failures); busy: people wait for it, or its call has
    run much longer than usual; up otherwise."""
    if circuit == "open":
        return "down"
    if queue is not None and (
        queue["waiting"] > 0
        or (queue["running"] and queue["running_s"] > _LONG_CALL_FACTOR * queue["average_call_s"])
    ):
        return "busy"
    return "up"
