"""The guard is built from its own settings section (GuardSettings), not field by field."""

from __future__ import annotations

from eko.config import GuardSettings, Settings
from eko.embed.hashing import HashEmbedder
from eko.guard.service import GuardService
from eko.store.db import Database
from eko.store.vectors import build_vector_index


def guard_from(section: GuardSettings, database: Database) -> GuardService:
    return GuardService.from_settings(
        section,
        database=database,
        vectors=build_vector_index(database, Settings(database_url=database.url, _env_file=None)),
        embedder=HashEmbedder(),
    )


async def test_the_section_sets_mode_thresholds_and_age(database: Database) -> None:
    section = GuardSettings(
        guard_mode="judge",
        guard_threshold=0.91,
        guard_thresholds={"fr": 0.95},
        guard_judge_floors={"en": 0.85},
        guard_max_age_days=30,
    )
    guard = guard_from(section, database)
    assert guard.max_age_days == 30
    assert guard.policy.mode == "judge"
    assert guard.policy.threshold("fr") == 0.95
    assert guard.policy.threshold("en") == 0.91
    assert guard.policy.judge_floor("en") == 0.85


async def test_the_whole_settings_is_a_guard_section(database: Database) -> None:
    settings = Settings(database_url=database.url, guard_mode="strict", _env_file=None)
    guard = guard_from(settings, database)
    assert guard.policy.mode == "strict"
    assert guard.policy.judge_floor("en") is None  # no grey band outside the judge mode
