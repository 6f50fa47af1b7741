"""Shared fixtures. Every test that takes `database` runs on SQLite AND on PostgreSQL."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import AsyncIterator, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sqlalchemy import text

from eko.store.db import Database
from eko.store.migrate import upgrade
from eko.store.models import Base
from tests import pg

# Rich sizes the CLI's consoles from COLUMNS when they are made: one width for every run (a
# terminal, CI, an xdist worker), so a test never depends on where a line was wrapped.
os.environ["COLUMNS"] = "200"

BACKENDS = ["sqlite", "postgres"]
T = TypeVar("T")


def pytest_configure(config: pytest.Config) -> None:
    """Two test workers share the machine's cores: llama.cpp's threads busy-wait at every step,
    so the bundled model on 2 threads beside a busy worker ran ~2x slower than on 1 (48 tokens:
    9.4-10.4 s against 5.3-5.6 s with one core taken). Servers the tests start inherit it."""
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
        os.environ.setdefault("EKO_LOCAL_THREADS", "1")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Groups for `pytest -n 2 --dist loadgroup` (scripts/test): a file's tests stay on one
    worker, so its module and session fixtures (a live server, a measured load run) are set up
    once, not once per worker. It runs first: xdist's own hook turns the marks into the
    "@group" suffix of each test's id, which is what the scheduler reads.

    No wider group: one that held every slow model test made them run one after another on
    one worker, the critical path of the run (over 35 minutes in all, measured 2026-11-27),
    while two of them side by side take one core each (EKO_LOCAL_THREADS above)."""
    root = Path(__file__).parent
    for item in items:
        group = Path(item.path).relative_to(root).as_posix()
        item.add_marker(pytest.mark.xdist_group(group))


def run_isolated(coro: Coroutine[Any, Any, T]) -> T:
    """Run set-up coroutines on a private loop in a thread: safe from sync fixtures, whatever
    loop pytest-asyncio has running."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def _migrate(url: str) -> None:
    database = Database(url)
    try:
        await upgrade(database)
    finally:
        await database.dispose()


async def _truncate(url: str) -> None:
    database = Database(url)
    tables = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
    try:
        async with database.engine.begin() as conn:
            await conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    finally:
        await database.dispose()


@pytest.fixture(scope="session")
def _shared_models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One directory for the bundled models for the whole run: assembled (1.1 GB) once, not
    once per test's data directory."""
    return tmp_path_factory.mktemp("eko-models")


@pytest.fixture(autouse=True)
def _private_eko_home(
    tmp_path_factory: pytest.TempPathFactory,
    _shared_models_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No test writes into the real user data directory (~/.local/share/eko); a test that
    cares about EKO_HOME sets its own. Models are shared across the run."""
    monkeypatch.setenv("EKO_HOME", str(tmp_path_factory.mktemp("eko-home")))
    monkeypatch.setenv("EKO_MODELS_PATH", str(_shared_models_dir))


@pytest.fixture(scope="session")
def pg_database_url() -> Iterator[str]:
    """One migrated throwaway database in a PostgreSQL+pgvector server, for the whole session."""
    with pg.server_url() as server:
        url = run_isolated(pg.create_database(server))
        run_isolated(_migrate(url))
        yield url
        run_isolated(pg.drop_database(server, url))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def database_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A migrated, empty database on the current backend."""
    if backend == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'eko.db'}"
        run_isolated(_migrate(url))
        return url
    url = str(request.getfixturevalue("pg_database_url"))
    run_isolated(_truncate(url))
    return url


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[Database]:
    db = Database(database_url)
    try:
        yield db
    finally:
        await db.dispose()
