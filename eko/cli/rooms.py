"""`eko rooms list|show`: the rooms on this server, for the operator (read-only)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.cli.common import console, database_read, load_settings, run
from eko.cli.ids import resolve_id_or_exit, resolve_user
from eko.store.models import Message, Room, RoomMember, User

app = typer.Typer(help="Rooms: list them, show one.", no_args_is_help=True)

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
