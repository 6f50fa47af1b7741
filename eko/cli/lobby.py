"""`eko reflect ROOM` (reflect now, in a lobby), `eko lobby activity ROOM` (one activity window
now: summary, then the opportunity path) and `eko lobby stats ROOM` (its counters and history).
ROOM is a lobby id or a unique prefix of one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any, TypeVar

import typer
from rich.markup import escape
from rich.table import Table

from eko.cli.common import console, fail, migrated_services, run
from eko.cli.ids import resolve_id_or_exit
from eko.lobby import store
from eko.lobby.live import reflection_dict, stats_dict
from eko.lobby.service import Activity
from eko.store.models import Room
from eko.wiring import Services

app = typer.Typer(
    help="The lobby's proactive side: an activity window now, reflection stats.",
    no_args_is_help=True,
)

T = TypeVar("T")
HISTORY = 50


def _with_lobby(given: str, work: Callable[[Services, str], Awaitable[T]]) -> T:
    async def go() -> T:
        async with migrated_services() as services:
            async with services.database.session() as session:
                room_id = await resolve_id_or_exit(
                    session, Room.id, given, what="room", listing="eko rooms list"
                )
                room = await session.get(Room, room_id)
            if room is None or room.kind != "lobby":
                fail(f"room {given!r} is not a lobby", fix="see `eko rooms list` (kind lobby)")
            return await work(services, room_id)

    return run(go())


def _when(value: Any) -> str:
    if isinstance(value, datetime):
        return f"{value:%Y-%m-%d %H:%M}"
    return str(value)[:16].replace("T", " ") if value else "-"


def reflect(
    room: Annotated[str, typer.Argument(help="The lobby's id (or a unique prefix).")],
    force: Annotated[
        bool, typer.Option("--force", help="Also when the last message is the assistant's.")
    ] = False,
) -> None:
    """Reflect now in a lobby (bypasses the rate limits), and print the decision."""

    async def work(services: Services, room_id: str) -> dict[str, Any]:
        reflection = await services.lobby.reflector.reflect(room_id, trigger="manual", force=force)
        return reflection_dict(reflection)

    _print_reflection(_with_lobby(room, work))


@app.command("activity")
def activity(
    room: Annotated[str, typer.Argument(help="The lobby's id (or a unique prefix).")],
) -> None:
    """Run one activity window now (what the schedule does every 10 minutes): summarize what
    was said since the last summary, then speak if something is worth saying (rate limits
    apply), and print what happened."""

    async def work(services: Services, room_id: str) -> tuple[Activity, str]:
        return await services.lobby.activity(room_id), (
            "rules" if services.lobby.opportunity.by_rules else "model"
        )

    done, decider = _with_lobby(room, work)
    if done.summary is None:
        console.print("nothing new: nobody spoke since the last summary (no model call)")
        return
    console.print(f"summary: {escape(done.summary.summary)}")
    console.print(f"decided by: {decider}")
    if done.reflection is None:
        console.print("action: [bold]pass[/bold]\nreason: nothing worth saying now")
        return
    _print_reflection(reflection_dict(done.reflection))


def _print_reflection(result: dict[str, Any]) -> None:
    console.print(f"action: [bold]{result['action']}[/bold]")
    if result["skipped"]:
        console.print(f"skipped: {result['skipped']}")
    if result["message"]:
        console.print(f"message: {escape(result['message'])}")
    console.print(f"reason: {escape(result['reason'] or '-')}")
    console.print(
        f"tone: {result['tone'] or '-'}  model calls: {result['model_calls']}  "
        f"tokens: {result['llm_tokens']}  {result['duration_ms']:.0f} ms"
    )


@app.command("stats")
def stats(
    room: Annotated[str, typer.Argument(help="The lobby's id (or a unique prefix).")],
    limit: Annotated[int, typer.Option(help="History rows shown.", min=0, max=HISTORY)] = 10,
) -> None:
    """A lobby's reflection counters, rate-limit state and recent history."""

    async def work(services: Services, room_id: str) -> tuple[dict[str, Any], list[Any]]:
        async with services.database.session() as session:
            row = await store.get_stats(session, room_id=room_id)
            history = await store.history(session, room_id=room_id, limit=limit)
        return stats_dict(row), [reflection_dict(r) for r in history]

    counters, history = _with_lobby(room, work)
    for key, value in counters.items():
        console.print(f"{key}: {value if value is not None else '-'}")
    if not history:
        return
    table = Table("when", "trigger", "action", "skipped", "tone", "calls", "tokens", "message")
    for item in history:
        table.add_row(
            _when(item["timestamp"]),
            item["trigger"],
            item["action"],
            item["skipped"] or "",
            item["tone"] or "",
            str(item["model_calls"]),
            str(item["llm_tokens"]),
            escape((item["message"] or item["reason"] or "")[:60]),
        )
    console.print(table)
