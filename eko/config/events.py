"""Settings of live events (/v1/events): a section of eko.config.Settings (which inherits it,
so it reads from EKO_* like every other setting)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class EventsSettings(BaseModel):
    # --- live events (/v1/events) ---
    # auto = in-process on SQLite, PostgreSQL LISTEN/NOTIFY on PostgreSQL (every worker's
    # clients see every worker's events).
    events_backend: Literal["auto", "local", "postgres"] = "auto"
    # Events buffered per connection; a client that falls this far behind is dropped with a
    # notice instead of slowing the server.
    events_queue_size: int = Field(default=256, ge=1, le=100_000)
    # Lifetime of the browser tokens from POST /v1/events/token.
    events_token_ttl_s: int = Field(default=300, ge=10, le=86_400)
    # Seconds between keep-alive comments/pings on an idle events connection.
    events_keepalive_s: float = Field(default=15.0, gt=0)
