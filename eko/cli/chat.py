"""`eko chat`: a terminal chat in a direct room, in-process or against a running server."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from typing import Annotated, Any, Protocol

import httpx
import typer
from rich.markup import escape

from eko.chain.cli_view import print_chain
from eko.chat.streaming import LiveReply
from eko.cli.common import console, err_console, fail, load_settings, run
from eko.cli.terminal_text import printable
from eko.config import Settings
from eko.logging import configure_logging
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.migrate import upgrade
from eko.wiring import Services, build_services

QUIT = {"/quit", "/exit", ":q"}
OnDelta = Callable[[str], None]


class ChatSession(Protocol):
    room_id: str

    async def send(self, text: str, on_delta: OnDelta) -> dict[str, Any] | None:
        """The stored reply (None: no reply); its text goes to `on_delta` as it is written."""
        ...

    async def close(self) -> None: ...


class LocalSession:
    """Runs the pipeline in this process on the configured database and models."""

    def __init__(self, services: Services, user: Any, room: Any) -> None:
        self.services, self.user, self.room = services, user, room
        self.room_id = room.id

    async def send(self, text: str, on_delta: OnDelta) -> dict[str, Any] | None:
        live = LiveReply(on_delta=lambda _index, delta: on_delta(delta))
        exchange = await self.services.chat.post(
            user=self.user, room=self.room, content=text, live=live
        )
        reply = exchange.assistant_message
        return None if reply is None else {"content": reply.content, "metadata": reply.meta}

    async def close(self) -> None:
        await self.services.aclose()

    @classmethod
    async def open(
        cls, settings: Settings, *, user_name: str, room_id: str | None, persona: str | None
    ) -> LocalSession:
        services = build_services(settings)
        await upgrade(services.database)
        async with services.database.session() as session:
            user = await user_repo.get_by_name(session, display_name=user_name)
            if user is None:
                # The terminal user is the operator's own (the process has the database in
                # hand): the free-message quota is a rule for end users, so it is created pro.
                user, _ = await user_repo.create_user(
                    session,
                    is_pro=True,
                    display_name=user_name,
                    free_quota_limit=settings.default_free_quota_limit,
                )
            if room_id:
                room = await room_repo.get_room(session, room_id=room_id)
                if room is None or not await room_repo.is_member(
                    session, room_id=room_id, user_id=user.id
                ):
                    await services.aclose()
                    fail(f"no room {room_id!r} for user {user_name!r}")
            else:
                chosen = persona or settings.default_persona
                if not services.prompts.has_persona(chosen):
                    await services.aclose()
                    fail(
                        f"unknown persona {chosen!r}",
                        fix=f"one of: {', '.join(services.prompts.personas())}",
                    )
                room = await room_repo.create_room(
                    session,
                    kind="direct",
                    name=f"{user_name} (terminal)",
                    persona=chosen,
                    created_by=user.id,
                )
        return cls(services, user, room)


class RemoteSession:
    """Talks to a running `eko serve` over HTTP with an API key."""

    def __init__(self, client: httpx.AsyncClient, room_id: str) -> None:
        self.client, self.room_id = client, room_id

    async def send(self, text: str, on_delta: OnDelta) -> dict[str, Any] | None:
        """The reply as Server-Sent Events (eko/api/sse_reply.py)."""
        async with self.client.stream(
            "POST",
            f"/v1/rooms/{self.room_id}/messages",
            json={"content": text},
            headers={"Accept": "text/event-stream"},
        ) as response:
            if response.status_code >= 400:
                await response.aread()
                raise RuntimeError(_problem_text(response))
            event = ""
            async for line in response.aiter_lines():
                if line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data = json.loads(line[5:])
                    if event == "delta":
                        on_delta(str(data["text"]))
                    elif event == "error":
                        err_console.print(f"[yellow]{escape(printable(str(data['detail'])))}[/]")
                    elif event == "done":
                        reply: dict[str, Any] | None = data["message"]
                        return reply
        raise RuntimeError("the server closed the stream before the reply was stored")

    async def close(self) -> None:
        await self.client.aclose()

    @classmethod
    async def open(
        cls, url: str, *, key: str, room_id: str | None, persona: str | None
    ) -> RemoteSession:
        client = httpx.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=300
        )
        try:
            if not room_id:
                body: dict[str, Any] = {"kind": "direct"}
                if persona:
                    body["persona"] = persona
                response = await client.post("/v1/rooms", json=body)
                if response.status_code >= 400:
                    raise RuntimeError(_problem_text(response))
                room_id = response.json()["id"]
            else:
                response = await client.get(f"/v1/rooms/{room_id}")
                if response.status_code >= 400:
                    raise RuntimeError(_problem_text(response))
        except (httpx.HTTPError, RuntimeError) as exc:
            await client.aclose()
            fail(
                f"cannot open a room on {url}: {exc}",
                fix="is `eko serve` running? is the key right?",
            )
        return cls(client, room_id)


async def _loop(session: ChatSession, *, details: bool = False) -> None:
    """Reads lines, prints replies. `details`: after each reply, the provider, mode and intent
    that produced it, and the reflexive chain's stages (for debugging; off by default)."""
    interactive = sys.stdin.isatty()
    console.print(f"[dim]room {session.room_id} — /quit to leave[/]")
    try:
        while True:
            try:
                # Reading stdin blocks: do it in a thread so the event loop stays free.
                text = await asyncio.to_thread(
                    (lambda: console.input("[bold blue]you>[/] ")) if interactive else input
                )
            except EOFError:
                break
            text = text.strip()
            if not text:
                continue
            if text in QUIT:
                break
            shown: list[str] = []
            status = console.status("Eko is thinking…")

            def on_delta(delta: str, shown: list[str] = shown, status: Any = status) -> None:
                if not shown:
                    status.stop()
                    console.print("[bold green]eko>[/] ", end="")
                shown.append(delta)
                console.print(escape(printable(delta)), end="", highlight=False, soft_wrap=True)

            status.start()
            try:
                reply = await session.send(text, on_delta)
            except Exception as exc:  # a bad turn must not end the chat
                status.stop()
                if shown:
                    console.print()
                err_console.print(f"[red]error:[/] {escape(printable(str(exc)))}")
                continue
            status.stop()
            if shown:
                console.print()
            if reply is None:
                console.print("[dim](no reply)[/]")
                continue
            meta = reply.get("metadata") or {}
            if not shown:
                console.print(f"[bold green]eko>[/] {escape(printable(reply['content']))}")
            elif reply["content"] != "".join(shown).strip():
                # The stored reply is the cleaned one (e.g. a cut the display could not foresee).
                console.print(f"[dim]stored as:[/] {escape(printable(reply['content']))}")
            if details:
                _print_details(meta)
    finally:
        await session.close()


def _print_details(meta: dict[str, Any]) -> None:
    parts = (meta.get("provider"), meta.get("mode"), meta.get("intent"), meta.get("fallback"))
    tag = " · ".join(str(x) for x in parts if x)
    if tag:
        console.print(f"[dim]{escape(printable(tag))}[/]")
    print_chain(console, meta)  # the reflexive chain's stages (eko/chain/)


def chat(
    user: Annotated[str, typer.Option(help="Local user name (created if missing).")] = "local",
    room: Annotated[
        str | None, typer.Option(help="Continue this room instead of a new one.")
    ] = None,
    persona: Annotated[str | None, typer.Option(help="Persona of a new room.")] = None,
    server: Annotated[str | None, typer.Option(help="URL of a running eko serve.")] = None,
    key: Annotated[
        str | None, typer.Option(envvar="EKO_API_KEY", help="API key for --server.")
    ] = None,
    details: Annotated[
        bool,
        typer.Option(help="After each reply, the provider, mode and chain stages behind it."),
    ] = False,
) -> None:
    """Chat with Eko in a direct room from the terminal."""
    settings = load_settings()
    configure_logging("WARNING")

    async def go() -> None:
        session: ChatSession
        if server:
            if not key:
                fail("--server needs an API key", fix="pass --key or set EKO_API_KEY")
            session = await RemoteSession.open(server, key=key, room_id=room, persona=persona)
        else:
            session = await LocalSession.open(
                settings, user_name=user, room_id=room, persona=persona
            )
        await _loop(session, details=details)

    run(go())


def _problem_text(response: httpx.Response) -> str:
    """The readable part of a problem+json error (detail, else title), else the raw body."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(body, dict):
        return str(body.get("detail") or body.get("title") or body)[:200]
    return str(body)[:200]
