"""What every command shares: settings, a console, running async code, clean failures."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console

from eko.config import Settings, mask_url
from eko.logging import configure_logging
from eko.store.db import Database
from eko.store.migrate import is_up_to_date

if TYPE_CHECKING:
    from eko.wiring import Services

T = TypeVar("T")

console = Console()
err_console = Console(stderr=True)


def fail(message: str, *, fix: str | None = None, code: int = 1) -> NoReturn:
    err_console.print(f"[bold red]error:[/] {message}")
    if fix:
        err_console.print(f"[yellow]fix:[/] {fix}")
    raise typer.Exit(code)


def load_settings(**overrides: Any) -> Settings:
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        lines = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        fail(f"invalid configuration: {lines}", fix="check your EKO_* variables and .env")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


async def require_migrated(database: Database, settings: Settings) -> None:
    """Exit with a fix when the database is unreachable or behind the code's migrations."""
    try:
        ok = await is_up_to_date(database)
    except Exception as exc:
        fail(
            f"database unreachable ({mask_url(settings.database_url)}): {exc}",
            fix="check EKO_DATABASE_URL",
        )
    if not ok:
        fail("the database is not migrated", fix="run `eko db upgrade`")


@asynccontextmanager
async def migrated_services() -> AsyncIterator[Services]:
    """Every service, on a reachable and migrated database; closed on exit."""
    from eko.wiring import build_services  # heavy imports only for commands that need them

    settings = load_settings()
    configure_logging("WARNING")
    services = build_services(settings)
    try:
        await require_migrated(services.database, settings)
        yield services
    finally:
        await services.aclose()
