"""The bus is chosen from its settings section (EventsSettings) and the database it serves."""

from __future__ import annotations

from pathlib import Path

import pytest

from eko.config import EventsSettings
from eko.events.build import build_event_bus
from eko.events.local import InProcessBus
from eko.store.db import Database


async def test_auto_is_in_process_on_sqlite(tmp_path: Path) -> None:
    database = Database(f"sqlite+aiosqlite:///{tmp_path}/eko.db")
    try:
        assert isinstance(build_event_bus(EventsSettings(), database), InProcessBus)
        with pytest.raises(ValueError, match="needs a PostgreSQL database"):
            build_event_bus(EventsSettings(events_backend="postgres"), database)
    finally:
        await database.dispose()
