"""Choose the bus from the configuration."""

from __future__ import annotations

from eko.config import EventsSettings
from eko.events.local import InProcessBus
from eko.events.types import EventBus
from eko.store.db import Database


def build_event_bus(settings: EventsSettings, database: Database) -> EventBus:
    backend = settings.events_backend
    if backend == "auto":
        backend = "postgres" if database.dialect == "postgresql" else "local"
    if backend == "postgres":
        if database.dialect != "postgresql":
            raise ValueError("EKO_EVENTS_BACKEND=postgres needs a PostgreSQL database")
        from eko.events.pg import PgNotifyBus

        return PgNotifyBus(database)
    return InProcessBus()
