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
        fail(
            f"migration failed on {mask_url(settings.database_url)}: {exc}",
            fix="check EKO_DATABASE_URL and that the server is reachable",
        )
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


# Collections whose vectors are questions compared with questions (e5 "query" on both sides);
# every other collection stores passages retrieved by a query.
QUERY_COLLECTIONS = frozenset({"guard"})


@app.command("reembed")
def reembed_command(
    yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
) -> None:
    """Re-embed every stored vector made by another embedding model than the configured one."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    from eko.embed import build_embedder
    from eko.store.vectors import build_vector_index

    settings = load_settings()

    async def go() -> int:
        database = Database(settings.database_url)
        try:
            embedder = build_embedder(settings)
            index = build_vector_index(database, settings)
            async with database.session() as session:
                others = await index.count_other_models(session, model=embedder.name)
            if not others:
                console.print(f"every vector is already embedded by {embedder.name}")
                return 0
            total = sum(others.values())
            console.print(f"{total} vectors to re-embed with {embedder.name}: {others}")
            if not yes and not typer.confirm("continue?"):
                return 0
            columns = (
                *Progress.get_default_columns()[:1],
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
            )
            with Progress(*columns, console=console) as progress:
                task = progress.add_task("re-embedding", total=total)
                async for step in index.reembed(
                    database.session,
                    embedder=embedder,
                    kind_of=lambda c: "query" if c in QUERY_COLLECTIONS else "passage",
                ):
                    progress.update(task, completed=step.done, total=step.total)
            return total
        finally:
            await database.dispose()

    try:
        done = run(go())
    except Exception as exc:
        fail(f"re-embedding failed: {exc}", fix="check EKO_DATABASE_URL and the embedder settings")
    if done:
        console.print(f"re-embedded {done} vectors")
