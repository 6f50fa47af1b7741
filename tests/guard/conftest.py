"""A GuardService on the current backend's database with the hash embedder (threshold 0.9)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import update

from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.guard.service import GuardService
from eko.store.db import Database
from eko.store.guard_models import GuardEntry
from eko.store.models import utcnow
from eko.store.vectors import build_vector_index
from tests.api.conftest import make_harness  # noqa: F401  (the API harness, reused here)

GuardFactory = Callable[..., GuardService]


@pytest.fixture
def make_guard(database: Database) -> GuardFactory:
    def factory(**options: object) -> GuardService:
        settings = Settings(database_url=database.url, _env_file=None)
        return GuardService(
            database=database,
            vectors=build_vector_index(database, settings),
            embedder=HashEmbedder(),
            **options,  # type: ignore[arg-type]
        )

    return factory


async def age_entry(database: Database, entry_id: str, days: float) -> None:
    """Pretend an entry was created `days` ago."""
    from datetime import timedelta

    async with database.session() as session:
        await session.execute(
            update(GuardEntry)
            .where(GuardEntry.id == entry_id)
            .values(created_at=utcnow() - timedelta(days=days))
        )
