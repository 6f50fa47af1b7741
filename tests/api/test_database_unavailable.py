"""A database that cannot be reached (PostgreSQL restarting, a refused connection) is a 503
with Retry-After, not a 500; a database error that is a bug stays a 500."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.ext.asyncio import create_async_engine

from eko.api.overload import database_unavailable, install_overload_handlers
from eko.api.problems import install_problem_handlers


class _DriverError(Exception):
    def __init__(self, message: str, sqlstate: str | None) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


def _dbapi(sqlstate: str | None, kind: type[DBAPIError] = DBAPIError) -> DBAPIError:
    return kind("SELECT 1", {}, _DriverError("failed", sqlstate))


async def _connect_to_a_missing_socket() -> None:
    """What PostgreSQL restarting looks like from asyncpg: its unix socket is gone."""
    engine = create_async_engine("postgresql+asyncpg://postgres@/eko?host=/nonexistent-eko-pg")
    try:
        async with engine.connect():
            pass
    finally:
        await engine.dispose()


def _app(error: Callable[[], BaseException] | None = None, *, connect: bool = False) -> FastAPI:
    app = FastAPI()
    install_problem_handlers(app)
    install_overload_handlers(app)

    @app.get("/boom")
    async def boom() -> None:
        if connect:
            await _connect_to_a_missing_socket()
        assert error is not None
        raise error()

    return app


async def _get(app: FastAPI) -> httpx.Response:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await client.get("/boom")


@pytest.mark.parametrize(
    "error",
    [
        lambda: _dbapi("57P01"),  # admin_shutdown: the server is restarting
        lambda: _dbapi("57P03"),  # cannot_connect_now: still starting up
        lambda: _dbapi("08006"),  # connection failure
        lambda: _dbapi(None, OperationalError),
    ],
)
async def test_an_unreachable_database_is_a_503_with_retry_after(
    error: Callable[[], BaseException],
) -> None:
    response = await _get(_app(error))
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "2"
    assert response.json()["type"] == "urn:eko:problem:database-unavailable"


async def test_a_missing_database_socket_is_a_503() -> None:
    with pytest.raises(OSError) as raised:  # raw, not wrapped by SQLAlchemy
        await _connect_to_a_missing_socket()
    assert database_unavailable(raised.value)
    response = await _get(_app(connect=True))
    assert response.status_code == 503
    assert response.json()["type"] == "urn:eko:problem:database-unavailable"


@pytest.mark.parametrize(
    "error",
    [
        lambda: _dbapi("23505", IntegrityError),  # unique violation: a bug, not an outage
        lambda: _dbapi("42P01"),  # undefined table
        lambda: FileNotFoundError("a missing prompt file"),  # an OSError from Eko's own code
    ],
)
async def test_other_database_errors_stay_500(error: Callable[[], BaseException]) -> None:
    response = await _get(_app(error))
    assert response.status_code == 500
    assert response.json()["type"] == "urn:eko:problem:internal-error"
