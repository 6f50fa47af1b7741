"""GET /health: the seed's shape (status, environment, version, timestamp) plus each part."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter

from eko import __version__
from eko.api.deps import ServicesDep

router = APIRouter(tags=["health"])

# Past this age the background probe is stuck or not running: report it, do not trust it.
_DB_CHECK_STALE_S = 5.0


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
    providers: list[dict[str, Any]] = [
        {
            "name": p.name,
            "model": p.model,
            "circuit": breakers[p.name].state if p.name in breakers else "closed",
            "retry_in_s": breakers[p.name].retry_in_s if p.name in breakers else 0.0,
        }
        for p in services.providers
    ]
    model = {
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
