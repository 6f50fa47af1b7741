"""CLI fixtures: an environment pointing every command at the test database, and the API
harness (tests/api) for tests that check what the server sees of what the CLI wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.conftest import make_harness

__all__ = ["cli_env", "make_harness"]


@pytest.fixture
def cli_env(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """EKO_DATABASE_URL = the current backend's test database; EKO_HOME a temp dir; the
    working directory a temp dir (no stray .env from the developer's checkout)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EKO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("EKO_DATABASE_URL", database_url)
    monkeypatch.setenv("COLUMNS", "200")  # rich tables: whole cells on one line
    return database_url
