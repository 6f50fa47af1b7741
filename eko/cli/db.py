"""`eko db upgrade|current|reembed`."""

from __future__ import annotations

import typer

from eko.cli.common import console, fail, load_settings, run
from eko.config import mask_url
from eko.store.db import Database
from eko.store.migrate import current_revision, head_revision, upgrade

app = typer.Typer(help="Database schema and vectors.", no_args_is_help=True)


@app.command("upgrade")
def upgrade_command() -> None:
    """Apply every pending migration."""
    settings = load_settings()

    async def go() -> tuple[str | None, str | None]:
        database = Database(settings.database_url)
        try:
            before = await current_revision(database)
            await upgrade(database)
            return before, await current_revision(database)
        finally:
            await database.dispose()

    try:
        before, after = run(go())
    except Exception as exc:
        fail(f"migration failed on {mask_url(settings.database_url)}: {exc}",
             fix="check EKO_DATABASE_URL and that the server is reachable")
    console.print(f"database {mask_url(settings.database_url)}: {before or 'empty'} -> {after}")


@app.command("current")
def current_command() -> None:
    """Show the schema revision and whether it is the latest."""
    settings = load_settings()

    async def go() -> str | None:
        database = Database(settings.database_url)
        try:
            return await current_revision(database)
        finally:
            await database.dispose()

    try:
        revision = run(go())
    except Exception as exc:
        fail(f"database unreachable: {exc}", fix="check EKO_DATABASE_URL")
    head = head_revision()
    state = "up to date" if revision == head else f"behind (head is {head}): run `eko db upgrade`"
    console.print(f"revision {revision or 'none'}: {state}")
