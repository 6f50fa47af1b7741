"""GET /health: the seed's shape (status, environment, version, timestamp) plus each part."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter

from eko import __version__
from eko.api.deps import ServicesDep
from eko.store.migrate import is_up_to_date

router = APIRouter(tags=["health"])

_DB_CHECK_TIMEOUT_S = 1.0


@router.get("/health")
async def health(services: ServicesDep) -> dict[str, Any]:
    database: dict[str, Any] = {"backend": services.database.dialect}
    try:
        # On the probe connection, bounded: health answers fast even when every pooled
        # connection is busy serving messages.
        database["migrated"] = await asyncio.wait_for(
            is_up_to_date(services.database, probe=True), _DB_CHECK_TIMEOUT_S
        )
        database["status"] = "ok"
        database["vectors"] = services.vectors.backend
    except Exception as exc:  # health must answer whatever the database does
        database["status"] = "error"
        database["error"] = (str(exc) or type(exc).__name__)[:200]
    database["pool"] = services.database.pool_status()
    try:
        dim: int | None = services.embedder.dim
    except Exception:  # a remote embedder learns its dimension from its first answer
        dim = None
    breakers = {b.provider: b for b in services.runtime.breakers()}
    model = {
        "providers": [
            {
                "name": p.name,
                "model": p.model,
                "circuit": breakers[p.name].state if p.name in breakers else "closed",
                "retry_in_s": breakers[p.name].retry_in_s if p.name in breakers else 0.0,
            }
            for p in services.providers
        ],
        "embedder": {"name": services.embedder.name, "dim": dim},
    }
    healthy = database["status"] == "ok" and database.get("migrated", False)
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
