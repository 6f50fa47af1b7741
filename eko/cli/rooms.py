"""`eko rooms list|show|import|attach|attachments|detach`: the rooms on this server, for the
operator; `import` stores a conversation's history into a room (eko/chat/history_import.py) and
indexes it, with progress; the attachment commands are in eko/cli/room_attachments.py."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.chat.history_import import ImportConflict, ImportInvalid
from eko.cli.common import (
    console,
    database_read,
    err_console,
    fail,
    load_settings,
    migrated_services,
    run,
)
from eko.cli.ids import resolve_id_or_exit, resolve_user
from eko.cli.import_file import read_turns
from eko.cli.room_attachments import attach, attachments, detach
from eko.config import Settings
from eko.events.fanout import Subscription
from eko.jobs.turn_indexing import DONE, PROGRESS
from eko.store import rooms as room_repo
from eko.store.models import Message, Room, RoomMember, User
from eko.wiring import Services

app = typer.Typer(
    help="Rooms: list them, show one, import a history, attach files.", no_args_is_help=True
)
app.command("attach")(attach)
app.command("attachments")(attachments)
app.command("detach")(detach)

ID_WIDTH = 32


@dataclass(frozen=True)
class RoomSummary:
    room: Room
    members: int
    messages: int
    last_activity: datetime | None


def _summaries_query() -> tuple[Select[Any], ColumnElement[Any]]:
    """Rooms with member count, message count and last message time; and that last column."""
    members = (
        select(RoomMember.room_id, func.count().label("n")).group_by(RoomMember.room_id).subquery()
    )
    messages = (
        select(
            Message.room_id,
            func.count().label("n"),
            func.max(Message.created_at).label("last"),
        )
        .group_by(Message.room_id)
        .subquery()
    )
    query = (
        select(
            Room,
            func.coalesce(members.c.n, 0),
            func.coalesce(messages.c.n, 0),
            messages.c.last,
        )
        .outerjoin(members, members.c.room_id == Room.id)
        .outerjoin(messages, messages.c.room_id == Room.id)
    )
    return query, messages.c.last


async def room_summaries(
    session: AsyncSession, *, user_id: int | None = None, limit: int = 50
) -> list[RoomSummary]:
    """Rooms with their member and message counts, most recently active first."""
    query, last = _summaries_query()
    if user_id is not None:
        query = query.where(
            Room.id.in_(select(RoomMember.room_id).where(RoomMember.user_id == user_id))
        )
    query = query.order_by(func.coalesce(last, Room.created_at).desc(), Room.id).limit(limit)
    rows = (await session.execute(query)).all()
    return [RoomSummary(row[0], int(row[1]), int(row[2]), row[3]) for row in rows]


def _when(moment: datetime | None) -> str:
    return "-" if moment is None else f"{moment:%Y-%m-%d %H:%M}"


@app.command("list")
def list_rooms(
    user: Annotated[
        str | None, typer.Option("--user", help="Only this user's rooms (name or public id).")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=10_000)] = 50,
) -> None:
    """Rooms, most recently active first: id, kind, name, persona, members, messages."""
    settings = load_settings()

    async def go() -> tuple[list[RoomSummary], str]:
        async with database_read(settings) as database, database.session() as session:
            owner = await resolve_user(session, user) if user else None
            summaries = await room_summaries(
                session, user_id=owner.id if owner else None, limit=limit
            )
            return summaries, f" of {owner.display_name}" if owner else ""

    summaries, whose = run(go())
    table = Table(title=f"{len(summaries)} rooms{escape(whose)}")
    table.add_column("id", no_wrap=True, min_width=ID_WIDTH)
    for column in ("kind", "name", "persona", "members", "messages", "last activity"):
        table.add_column(column, justify="right" if column in ("members", "messages") else "left")
    for summary in summaries:
        room = summary.room
        table.add_row(
            room.id,
            room.kind,
            escape(room.name),
            room.persona,
            str(summary.members),
            str(summary.messages),
            _when(summary.last_activity),
        )
    console.print(table)


@app.command("show")
def show_room(
    room: Annotated[str, typer.Argument(help="Room id (or a unique prefix of it).")],
) -> None:
    """One room: id, kind, name, persona, members, message count, last activity."""
    settings = load_settings()

    async def go() -> tuple[RoomSummary, list[User]]:
        async with database_read(settings) as database, database.session() as session:
            room_id = await resolve_id_or_exit(
                session, Room.id, room, what="room", listing="eko rooms list"
            )
            query, _ = _summaries_query()
            row = (await session.execute(query.where(Room.id == room_id))).one()
            members = await session.execute(
                select(User)
                .join(RoomMember, RoomMember.user_id == User.id)
                .where(RoomMember.room_id == room_id)
                .order_by(RoomMember.joined_at, User.id)
            )
            summary = RoomSummary(row[0], int(row[1]), int(row[2]), row[3])
            return summary, list(members.scalars().all())

    summary, members = run(go())
    found = summary.room
    lines = [
        ("id", found.id),
        ("kind", found.kind),
        ("name", escape(found.name)),
        ("persona", found.persona),
        ("created", _when(found.created_at)),
        ("messages", str(summary.messages)),
        ("last activity", _when(summary.last_activity)),
        ("members", str(summary.members)),
    ]
    for label, value in lines:
        console.print(f"[bold]{label}:[/] {value}")
    for member in members:
        pro = ", pro" if member.is_pro else ""
        console.print(f"  - {escape(member.display_name)} ({member.public_id}, {member.role}{pro})")


@app.command("import")
def import_history(
    file: Annotated[
        Path, typer.Argument(help="JSON: a list of {role, content, created_at?, name?}.")
    ],
    user: Annotated[
        str,
        typer.Option("--user", help="Whose history (name or public id): the user turns' sender."),
    ],
    room: Annotated[
        str | None,
        typer.Option("--room", help="Into this room (id or prefix); default: a new direct room."),
    ] = None,
) -> None:
    """Store a conversation's history in a room, all or nothing (not counted against the free
    quota, not answered), then embed its turns for recall, with a progress bar."""
    if not file.is_file():
        fail(f"no file {str(file)!r}")
    try:
        turns = read_turns(file)
    except ImportInvalid as exc:
        _print_errors(exc)
        fail(f"{len(exc.errors)} invalid messages in {file}; nothing was stored", code=2)
    except ValueError as exc:
        fail(str(exc), code=2)

    async def go() -> tuple[str, int, Spent]:
        async with migrated_services() as services:
            try:
                services.history_import.check(turns)
            except ImportInvalid as exc:
                _print_errors(exc)
                fail(f"{len(exc.errors)} invalid messages in {file}; nothing was stored", code=2)
            async with services.database.session() as session:
                owner = await resolve_user(session, user)
                target = await _target_room(session, services.settings, owner, room)
            subscription = await services.events.subscribe(max_queue=10_000)
            try:
                result = await services.history_import.store(user=owner, room=target, turns=turns)
            except ImportConflict as exc:
                fail(str(exc) + "; nothing was stored", code=2)
            console.print(
                f"imported {result.created} messages into room {target.id}"
                + (
                    f" ({len(result.messages) - result.created} already there)"
                    if len(result.messages) > result.created
                    else ""
                )
            )
            started, cpu = time.monotonic(), time.process_time()
            indexed = await _index_with_progress(services, subscription, target.id)
            spent = Spent(time.monotonic() - started, time.process_time() - cpu)
            return target.id, indexed, spent

    room_id, indexed, spent = run(go())
    console.print(f"indexed {indexed} turns in {spent.describe(indexed)}; room {room_id}")


@dataclass(frozen=True)
class Spent:
    """An indexing's wall time and this process's CPU time (all its threads) meanwhile: the
    turns per CPU-second hold on a busy machine, where the wall time depends on the others."""

    seconds: float
    cpu_seconds: float

    def describe(self, turns: int) -> str:
        text = f"{self.seconds:.1f} s"
        if turns and self.seconds > 0:
            text += f", {turns / self.seconds:.1f} turns/s"
        if turns and self.cpu_seconds > 0:
            text += (
                f" ({self.cpu_seconds:.1f} CPU-seconds, "
                f"{turns / self.cpu_seconds:.1f} turns per CPU-second)"
            )
        return text


def _print_errors(exc: ImportInvalid) -> None:
    for error in exc.errors[:20]:
        err_console.print(f"  {escape(str(error))}")
    if len(exc.errors) > 20:
        err_console.print(f"  … and {len(exc.errors) - 20} more")


async def _target_room(
    session: AsyncSession, settings: Settings, owner: User, given: str | None
) -> Room:
    if given is not None:
        room_id = await resolve_id_or_exit(
            session, Room.id, given, what="room", listing="eko rooms list"
        )
        found = await room_repo.get_room(session, room_id=room_id)
        assert found is not None
        if not await room_repo.is_member(session, room_id=room_id, user_id=owner.id):
            fail(
                f"{owner.display_name} is not a member of room {room_id}",
                fix="import into one of their rooms, or omit --room for a new one",
            )
        return found
    return await room_repo.create_room(
        session,
        kind="direct",
        name=f"{owner.display_name} & {settings.assistant_name}",
        persona=settings.default_persona,
        created_by=owner.id,
    )


async def _index_with_progress(services: Services, subscription: Subscription, room_id: str) -> int:
    """Run the queued jobs (the import's indexing among them) while drawing its progress from
    its memory.indexing events. Returns how many turns it indexed."""
    indexed = 0
    with Progress(
        TextColumn("[bold]indexing[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        task = bar.add_task("indexing", total=None)

        async def follow() -> None:
            nonlocal indexed
            while True:
                event = await subscription.get()
                if event.room_id != room_id:
                    continue
                if event.type == PROGRESS:
                    bar.update(task, completed=event.data["done"], total=event.data["total"])
                elif event.type == DONE:
                    indexed = int(event.data["indexed"])

        following = asyncio.create_task(follow())
        try:
            await services.jobs.drain()
            await asyncio.sleep(0.05)  # the last events reach the bar
        finally:
            following.cancel()
            subscription.close()
    return indexed
