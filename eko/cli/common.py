"""What every command shares: settings, a console, running async code, clean failures.

Imports here stay light (typer, rich, pydantic settings): every command loads this module, and
`eko --help` or `eko users list` must start fast. The database, migrations and services are
imported inside the functions that need them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from eko.config import Settings, mask_url

if TYPE_CHECKING:
    from eko.store.db import Database
    from eko.wiring import Services

T = TypeVar("T")

console = Console()
err_console = Console(stderr=True)

DATABASE_FIX = (
    "check EKO_DATABASE_URL / EKO_HOME (`eko doctor` shows both); a new database is created "
    "by `eko serve` or `eko db upgrade`"
)


def fail(message: str, *, fix: str | None = None, code: int = 1) -> NoReturn:
    # Unwrapped and unmarked-up: a path or a name in the message stays whole (rich would
    # break it at the console's width, and read "[...]" in it as markup) so it can be copied.
    err_console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
    if fix:
        err_console.print(f"[yellow]fix:[/] {escape(fix)}", soft_wrap=True)
    raise typer.Exit(code)


def load_settings(**overrides: Any) -> Settings:
    """The settings, with Eko's data directory created on first use."""
    try:
        settings = Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        lines = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        fail(f"invalid configuration: {lines}", fix="check your EKO_* variables and .env")
    try:
        settings.ensure_home()
    except OSError as exc:
        fail(
            f"cannot create Eko's data directory {settings.home}: {exc}",
            fix="set EKO_HOME to a writable directory",
        )
    return settings


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


async def require_migrated(database: Database, settings: Settings) -> None:
    """Exit with a fix when the database is unreachable or behind the code's migrations."""
    from eko.store.migrate import is_up_to_date

    try:
        ok = await is_up_to_date(database)
    except Exception as exc:
        fail(
            f"database unreachable ({mask_url(settings.database_url)}): {exc}",
            fix="check EKO_DATABASE_URL",
        )
    if not ok:
        fail(
            f"the database {mask_url(settings.database_url)} is not migrated",
            fix="run `eko db upgrade` (`eko serve` does it at start)",
        )


@asynccontextmanager
async def open_database(settings: Settings) -> AsyncIterator[Database]:
    """The configured database, disposed of on exit."""
    from eko.store.db import Database

    database = Database(settings.database_url)
    try:
        yield database
    finally:
        await database.dispose()


@asynccontextmanager
async def database_read(settings: Settings) -> AsyncIterator[Database]:
    """The database for a command that only reads: no migration check up front (it costs
    importing Alembic on every run); if a query fails, the reason is found then and reported
    with its fix (unreachable, not migrated) instead of a traceback."""
    from sqlalchemy.exc import SQLAlchemyError

    async with open_database(settings) as database:
        try:
            yield database
        except (SQLAlchemyError, OSError) as exc:
            await require_migrated(database, settings)
            fail(
                f"cannot read the database {mask_url(settings.database_url)}: {_first_line(exc)}",
                fix=DATABASE_FIX,
            )


def _first_line(exc: BaseException) -> str:
    # SQLAlchemy wraps the driver's error and appends the statement and a link: the driver's
    # first line is the part a person can act on.
    original = getattr(exc, "orig", None) or exc
    return (str(original).strip().splitlines() or [type(original).__name__])[0][:200]


@asynccontextmanager
async def migrated_services() -> AsyncIterator[Services]:
    """Every service, on a reachable and migrated database; closed on exit."""
    from eko.logging import configure_logging
    from eko.wiring import build_services  # heavy imports only for commands that need them

    settings = load_settings()
    configure_logging("WARNING")
    services = build_services(settings)
    try:
        await require_migrated(services.database, settings)
        yield services
    finally:
        await services.aclose()
