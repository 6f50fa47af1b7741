"""GET /health: the seed's shape (status, environment, version, timestamp) plus each part."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter
from sqlalchemy import text

from eko import __version__
from eko.api.deps import ServicesDep
from eko.store.migrate import is_up_to_date

router = APIRouter(tags=["health"])


@router.get("/health")
async def health(services: ServicesDep) -> dict[str, Any]:
    database: dict[str, Any] = {"backend": services.database.dialect}
    try:
        async with services.database.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
        database["status"] = "ok"
        database["migrated"] = await is_up_to_date(services.database)
        database["vectors"] = services.vectors.backend
    except Exception as exc:  # health must answer whatever the database does
        database["status"] = "error"
        database["error"] = str(exc)[:200]
    try:
        dim: int | None = services.embedder.dim
    except Exception:  # a remote embedder learns its dimension from its first answer
        dim = None
    model = {
        "providers": [{"name": p.name, "model": p.model} for p in services.providers],
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
    }
