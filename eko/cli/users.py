"""`eko users create|list`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from eko.cli.common import console, fail, load_settings, require_migrated, run
from eko.store import users as user_repo
from eko.store.db import Database

app = typer.Typer(help="Create and list users.", no_args_is_help=True)


async def _migrated_database() -> Database:
    settings = load_settings()
    database = Database(settings.database_url)
    try:
        await require_migrated(database, settings)
    except BaseException:
        await database.dispose()
        raise
    return database


@app.command("create")
def create(
    name: Annotated[str, typer.Argument(help="Display name.")],
    staff: Annotated[bool, typer.Option("--staff", help="Give the staff role.")] = False,
    pro: Annotated[bool, typer.Option("--pro", help="Mark as a pro (paying) user.")] = False,
) -> None:
    """Create a user and print its API key (shown once)."""
    if not name.strip() or len(name) > 200:
        fail("the name must be 1 to 200 characters")

    async def go() -> tuple[str, str]:
        database = await _migrated_database()
        try:
            async with database.session() as session:
                user, key = await user_repo.create_user(
                    session,
                    display_name=name.strip(),
                    role="staff" if staff else "member",
                    is_pro=pro,
                    free_quota_limit=load_settings().default_free_quota_limit,
                )
                return user.public_id, key
        finally:
            await database.dispose()

    public_id, key = run(go())
    console.print(f"created user [bold]{name}[/] ({'staff' if staff else 'member'}) id={public_id}")
    console.print("API key (shown once, store it now):")
    print(key)


@app.command("list")
def list_users() -> None:
    """List users."""

    async def go() -> list[tuple[str, str, str, bool, int, int]]:
        database = await _migrated_database()
        try:
            async with database.session() as session:
                return [
                    (
                        u.public_id,
                        u.display_name,
                        u.role,
                        u.is_pro,
                        u.free_quota_used,
                        u.free_quota_limit,
                    )
                    for u in await user_repo.list_users(session)
                ]
        finally:
            await database.dispose()

    table = Table("public id", "name", "role", "pro", "quota used", "quota limit")
    for row in run(go()):
        table.add_row(row[0], row[1], row[2], "yes" if row[3] else "no", str(row[4]), str(row[5]))
    console.print(table)
