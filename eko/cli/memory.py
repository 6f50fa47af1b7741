"""`eko memory list|search|delete|sources|reindex`, `eko summaries list|search|build`,
`eko topics list`.

The terminal is the operator's: it sees every scope (like staff in the API).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from eko.cli.common import console, fail, migrated_services, run
from eko.embed.base import EmbeddingError
from eko.memory.scopes import room_key
from eko.memory.sources import source_turn
from eko.memory.text import clip
from eko.store import rooms as room_repo
from eko.store.memory_models import GOAL_STATUSES, MEMORY_KINDS, Summary
from eko.wiring import Services

app = typer.Typer(help="Facts, self-knowledge and goals (curiosities).", no_args_is_help=True)
summaries_app = typer.Typer(help="A room's hierarchical summaries.", no_args_is_help=True)
topics_app = typer.Typer(help="Topics named by the summaries.", no_args_is_help=True)

T = TypeVar("T")
PREVIEW_CHARS = 90

# The arguments several commands take.
RoomArg = Annotated[str, typer.Argument(help="Room id.")]
QueryArg = Annotated[str, typer.Argument(help="Text to search for.")]
TopK = Annotated[int, typer.Option(min=1, max=50)]


def _with_services(work: Callable[[Services], Awaitable[T]]) -> T:
    async def go() -> T:
        async with migrated_services() as services:
            return await work(services)

    try:
        return run(go())
    except EmbeddingError as exc:
        fail(f"the embedder failed: {exc}", fix="check EKO_EMBEDDER (run `eko doctor`)")


async def _check_room(services: Services, room_id: str) -> None:
    async with services.database.session() as session:
        if await room_repo.get_room(session, room_id=room_id) is None:
            fail(f"no room {room_id!r}")


def _check_query(query: str) -> None:
    if not query.strip():
        fail("the query is empty")


def _check_choice(value: str | None, choices: tuple[str, ...], what: str) -> None:
    if value is not None and value not in choices:
        fail(f"unknown {what} {value!r}", fix=f"one of: {', '.join(choices)}")


# --- eko memory ---


@app.command("list")
def list_items(
    kind: Annotated[str | None, typer.Option(help="fact, self or goal.")] = None,
    scope: Annotated[str | None, typer.Option(help="user:<id>, room:<id> or global.")] = None,
    status: Annotated[str | None, typer.Option(help="Goals: open, asked or answered.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 50,
) -> None:
    """List memory items, most recently updated first."""
    _check_choice(kind, MEMORY_KINDS, "kind")
    _check_choice(status, GOAL_STATUSES, "status")

    async def work(services: Services) -> list[Any]:
        return await services.memory.items.list_items(
            keys=[scope] if scope else None, kind=kind, status=status, limit=limit
        )

    items = _with_services(work)
    table = Table(title=f"{len(items)} memory items")
    for column in ("id", "kind", "scope", "subject", "content", "status", "×", "updated"):
        table.add_column(column)
    for item in items:
        table.add_row(
            item.id,
            item.kind,
            item.scope,
            escape(item.subject),
            escape(clip(item.content, PREVIEW_CHARS)),
            item.status or "",
            str(item.mention_count),
            f"{item.updated_at:%Y-%m-%d %H:%M}",
        )
    console.print(table)


@app.command("search")
def search_items(
    query: QueryArg,
    kind: Annotated[str | None, typer.Option(help="fact, self or goal.")] = None,
    scope: Annotated[str | None, typer.Option(help="Only this scope (default: all).")] = None,
    k: TopK = 5,
) -> None:
    """The items closest to QUERY."""
    _check_choice(kind, MEMORY_KINDS, "kind")
    _check_query(query)

    async def work(services: Services) -> list[Any]:
        keys = [scope] if scope else await services.memory.items.all_scopes()
        return await services.memory.items.search(
            keys=keys, query=query, kinds=[kind] if kind else None, k=k
        )

    hits = _with_services(work)
    table = Table(title=f"closest to {query!r}")
    for column in ("score", "id", "kind", "scope", "subject", "content"):
        table.add_column(column)
    for hit in hits:
        item = hit.item
        table.add_row(
            f"{hit.score:.3f}",
            item.id,
            item.kind,
            item.scope,
            escape(item.subject),
            escape(clip(item.content, PREVIEW_CHARS)),
        )
    console.print(table)


@app.command("delete")
def delete_item(
    item_id: Annotated[str, typer.Argument(help="The item's id.")],
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete one memory item (and its vector)."""

    async def show(services: Services) -> Any:
        return await services.memory.items.get(item_id)

    item = _with_services(show)
    if item is None:
        fail(f"no memory item {item_id!r}")
    if not yes and not typer.confirm(f"delete {item.kind} {clip(item.content, 60)!r}?"):
        raise typer.Exit(1)

    async def work(services: Services) -> bool:
        return await services.memory.items.delete(item_id)

    _with_services(work)
    console.print(f"deleted {item_id}")


@app.command("sources")
def item_sources(item_id: Annotated[str, typer.Argument(help="The item's id.")]) -> None:
    """The turn a memory item was learned from: its source message and the reply to it."""

    async def work(services: Services) -> tuple[Any, list[Any]]:
        item = await services.memory.items.get(item_id)
        if item is None:
            return None, []
        async with services.database.session() as session:
            return item, await source_turn(session, message_id=item.source_message_id)

    item, turn = _with_services(work)
    if item is None:
        fail(f"no memory item {item_id!r}")
    console.print(f"{item.kind} [bold]{escape(item.subject)}[/]: {escape(item.content)}")
    if not turn:
        console.print("no source turn (written by hand, or its message was deleted)")
        return
    console.print(f"learned in room {turn[0].room_id}:")
    for message in turn:
        console.print(
            f"  #{message.seq} {message.created_at:%Y-%m-%d %H:%M} {message.role}: "
            f"{escape(clip(message.content, 300))}"
        )


# --- eko summaries ---


@summaries_app.command("list")
def list_summaries(
    room: RoomArg,
    level: Annotated[int | None, typer.Option(min=1, help="Only this level.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 50,
) -> None:
    """A room's summaries, by level then chronologically."""

    async def work(services: Services) -> list[Any]:
        await _check_room(services, room)
        return await services.memory.summary_reader.list_summaries(room, level=level, limit=limit)

    _print_summaries(_with_services(work), title=f"summaries of room {room}")


@summaries_app.command("search")
def search_summaries(
    room: RoomArg,
    query: QueryArg,
    topic: Annotated[str | None, typer.Option(help="Only this topic (id or name).")] = None,
    k: TopK = 5,
) -> None:
    """The room's summaries closest to QUERY."""
    _check_query(query)

    async def work(services: Services) -> list[Any]:
        await _check_room(services, room)
        try:
            return await services.memory.summary_reader.search(room, query=query, topic=topic, k=k)
        except LookupError as exc:
            fail(str(exc), fix=f"see `eko topics list {room}`")

    _print_summaries(_with_services(work), title=f"closest to {query!r}")


def _print_summaries(views: list[Any], *, title: str) -> None:
    table = Table(title=f"{title} ({len(views)})")
    for column in ("level", "chars", "period", "topics", "conversation", "actions", "score"):
        table.add_column(column)
    for view in views:
        s = view.summary
        table.add_row(
            f"L{s.level}",
            f"{s.char_range_start}-{s.char_range_end}",
            f"{s.period_start:%Y-%m-%d}…{s.period_end:%Y-%m-%d}",
            escape(", ".join(view.topics)),
            escape(clip(s.conversation_summary, PREVIEW_CHARS)),
            escape(clip(s.actions_summary, PREVIEW_CHARS // 2)),
            "" if view.similarity is None else f"{view.similarity:.3f}",
        )
    console.print(table)


@summaries_app.command("build")
def build_summaries(
    room: RoomArg,
    max_new: Annotated[int | None, typer.Option(min=1, help="Stop after this many.")] = None,
) -> None:
    """Catch a room's summary backlog up now, oldest first, with a progress bar."""

    async def work(services: Services) -> Any:
        await _check_room(services, room)
        builder = services.memory.summaries
        pending = await builder.pending_l1(room)
        with Progress(
            TextColumn("[bold]summaries[/]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=console,
        ) as progress:
            # L1 count is known; higher levels appear as they fill up, so the total grows.
            task = progress.add_task("", total=max_new or pending or None)

            def created(summary: Summary) -> None:
                progress.update(
                    task,
                    advance=1,
                    description=f"L{summary.level} chars {summary.char_range_start}-"
                    f"{summary.char_range_end}",
                )
                done = progress.tasks[0].completed
                total = progress.tasks[0].total
                if max_new is None and total is not None and done >= total:
                    progress.update(task, total=done + 1)

            result = await builder.catch_up(room, max_new=max_new, on_created=created)
            progress.update(task, total=progress.tasks[0].completed)
        return result

    result = _with_services(work)
    levels = ", ".join(f"L{level}: {count}" for level, count in sorted(result.by_level().items()))
    console.print(
        f"room {room}: {len(result.created)} new summaries ({levels or 'none'}), "
        f"{result.model_calls} model calls"
    )
    if result.stopped and result.stopped != "limit":
        fail(f"stopped early: {result.stopped}", fix="the next run resumes where this one stopped")


@app.command("reindex")
def reindex_turns(
    rooms: Annotated[list[str] | None, typer.Argument(help="Room ids.")] = None,
    all_rooms: Annotated[bool, typer.Option("--all", help="Every room.")] = False,
) -> None:
    """Embed every message of these rooms again (the turns recall searches by meaning)."""
    if not rooms and not all_rooms:
        fail("name one or more rooms, or --all", fix="eko memory reindex ROOM_ID")

    async def work(services: Services) -> tuple[int, int]:
        index = services.memory.context.turns
        async with services.database.session() as session:
            targets = await index.rooms(session) if all_rooms else list(rooms or [])
        for room_id in targets:
            await _check_room(services, room_id)
        total = 0
        with Progress(
            TextColumn("[bold]{task.description}[/]"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        ) as progress:
            for room_id in targets:
                task = progress.add_task(room_id, total=None)

                def advance(done: int, of: int, task: Any = task) -> None:
                    progress.update(task, completed=done, total=of)

                async with services.database.session() as session:
                    total += await index.reindex(session, room_id=room_id, progress=advance)
        return len(targets), total

    count, messages = _with_services(work)
    console.print(f"{messages} messages indexed in {count} room(s)")


# --- eko topics ---


@topics_app.command("list")
def list_topics(
    room: RoomArg,
    merged: Annotated[bool, typer.Option("--merged", help="Show merged topics too.")] = False,
) -> None:
    """A room's topics: aliases (merged names), related topics, summary counts."""

    async def work(services: Services) -> list[Any]:
        await _check_room(services, room)
        return await services.memory.topics.list_topics(scope=room_key(room), include_merged=merged)

    views = _with_services(work)
    table = Table(title=f"topics of room {room} ({len(views)})")
    for column in ("id", "name", "aliases", "related", "summaries", "merged into"):
        table.add_column(column)
    for view in views:
        related = ", ".join(
            f"{topic.name} ({confidence:.2f})" for topic, confidence in view.related
        )
        table.add_row(
            view.topic.id,
            escape(view.topic.name),
            escape(", ".join(view.aliases)),
            escape(related),
            str(view.summary_count),
            view.topic.merged_into_id or "",
        )
    console.print(table)


@topics_app.command("search")
def search_topics(
    room: RoomArg,
    query: QueryArg,
    k: TopK = 5,
) -> None:
    """The room's topics closest to QUERY (merged names lead to the topic they merged into)."""
    _check_query(query)

    async def work(services: Services) -> list[Any]:
        await _check_room(services, room)
        return await services.memory.topics.search(scope=room_key(room), query=query, k=k)

    hits = _with_services(work)
    table = Table(title=f"topics closest to {query!r}")
    for column in ("score", "id", "name"):
        table.add_column(column)
    for hit in hits:
        table.add_row(f"{hit.score:.3f}", hit.topic.id, escape(hit.topic.name))
    console.print(table)
