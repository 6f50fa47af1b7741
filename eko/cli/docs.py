"""`eko docs ingest|scopes|search|remove`: the documentation scopes the chat engine can read."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from eko.chat.docs.service import DocsService, InvalidScope, check_scope_name
from eko.cli.common import console, fail, migrated_services, run
from eko.embed.base import EmbeddingError

app = typer.Typer(
    help="Documentation scopes (docs chunks for the chat engine).", no_args_is_help=True
)

SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".txt": "text"}


@asynccontextmanager
async def _docs() -> AsyncIterator[DocsService]:
    async with migrated_services() as services:
        yield services.engine.docs


def documents(path: Path) -> list[tuple[Path, str]]:
    """(file, source name) for a file, or every .md/.markdown/.txt under a directory."""
    if path.is_file():
        if path.suffix.lower() not in SUFFIXES:
            fail(f"{path}: not a Markdown or text file", fix="use .md, .markdown or .txt")
        return [(path, path.name)]
    if not path.is_dir():
        fail(f"{path}: no such file or directory")
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
    return [(file, file.relative_to(path).as_posix()) for file in files]


@app.command("ingest")
def ingest(
    path: Annotated[Path, typer.Argument(help="A .md/.txt file, or a directory of them.")],
    scope: Annotated[str, typer.Option("--scope", help="Scope name (created if new).")],
    description: Annotated[
        str | None, typer.Option(help="What the scope holds (shown to the orchestrator).")
    ] = None,
) -> None:
    """Chunk and embed documents into a scope; re-ingesting a file replaces its chunks."""
    try:
        check_scope_name(scope)
    except InvalidScope as exc:
        fail(str(exc))
    files = documents(path)
    if not files:
        fail(f"no .md, .markdown or .txt file under {path}")

    async def go() -> tuple[int, int]:
        chunks = replaced = 0
        async with _docs() as docs:
            with Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[current]}"),
                console=console,
            ) as progress:
                task = progress.add_task(f"ingest → {scope}", total=len(files), current="")
                for file, source in files:
                    progress.update(task, current=escape(source))
                    try:
                        text = file.read_text(encoding="utf-8")
                    except (OSError, UnicodeDecodeError) as exc:
                        fail(f"{file}: cannot read as UTF-8 text: {exc}")
                    try:
                        result = await docs.ingest(
                            scope=scope,
                            source=source,
                            text=text,
                            fmt=SUFFIXES[file.suffix.lower()],
                            description=description,
                        )
                    except EmbeddingError as exc:
                        fail(f"embedding failed: {exc}", fix="check the embedder (eko doctor)")
                    chunks += result.chunks
                    replaced += result.replaced
                    progress.advance(task)
        return chunks, replaced

    chunks, replaced = run(go())
    console.print(
        f"scope [bold]{scope}[/]: {len(files)} file(s), {chunks} chunk(s) stored"
        + (f", {replaced} old chunk(s) replaced" if replaced else "")
    )


@app.command("scopes")
def scopes() -> None:
    """List the docs scopes."""

    async def go() -> Table:
        async with _docs() as docs:
            rows = await docs.list_scopes()
        table = Table("scope", "documents", "chunks", "description")
        for row in rows:
            table.add_row(row.name, str(row.sources), str(row.chunks), escape(row.description))
        return table

    console.print(run(go()))


@app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    scope: Annotated[list[str], typer.Option("--scope", help="Scope(s) to search (1-3).")],
    limit: Annotated[int, typer.Option(min=1, max=20)] = 8,
) -> None:
    """The chunks closest to QUERY within the scopes (hard caps: 3 scopes, 8 per scope, 20)."""

    async def go() -> Table:
        async with _docs() as docs:
            hits = await docs.search(query, scopes=scope, limit=limit)
        table = Table("score", "scope", "source", "title", "text")
        for hit in hits:
            flat = " ".join(hit.content.split())
            table.add_row(
                f"{hit.score:.3f}",
                hit.scope,
                escape(hit.source),
                escape(hit.title),
                escape(flat[:100] + ("…" if len(flat) > 100 else "")),
            )
        return table

    console.print(run(go()))


@app.command("remove")
def remove(scope: Annotated[str, typer.Argument(help="Scope to delete, with its chunks.")]) -> None:
    """Delete a scope and all of its chunks."""

    async def go() -> bool:
        async with _docs() as docs:
            return await docs.delete_scope(scope)

    if not run(go()):
        fail(f"no docs scope {scope!r}", fix="see `eko docs scopes`")
    console.print(f"scope [bold]{scope}[/] removed")
