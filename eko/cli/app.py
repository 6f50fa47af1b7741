"""Assembles the command groups, each imported only when it runs.

`eko users list` must not pay for importing the web framework, the model runtime and NumPy that
`eko serve` or `eko chat` need: a command's module is imported when that command is invoked,
and `eko --help` lists every command from the short help written here, importing none of them.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup


@dataclass(frozen=True)
class LazyCommand:
    """A command (a function) or a command group (a module's Typer app) not imported yet."""

    module: str
    attribute: str
    help: str

    def load(self, name: str) -> Any:
        target = getattr(importlib.import_module(self.module), self.attribute)
        command: Any
        if isinstance(target, typer.Typer):
            command = typer.main.get_group(target)
        else:
            single = typer.Typer()
            single.command(name)(target)
            command = typer.main.get_command(single)
        command.name = name
        return command


# Order = the order of `eko --help`. Help texts are the one-line summaries shown there.
COMMANDS: dict[str, LazyCommand] = {
    "serve": LazyCommand("eko.cli.serve", "serve", "Run the API and the web page."),
    "worker": LazyCommand("eko.cli.worker", "worker", "Run background jobs in this process."),
    "jobs": LazyCommand("eko.cli.jobs", "app", "Background jobs: list, retry, cancel."),
    "model": LazyCommand("eko.cli.model", "app", "The local model as a server."),
    "chat": LazyCommand("eko.cli.chat", "chat", "Chat in a direct room from the terminal."),
    "doctor": LazyCommand(
        "eko.cli.doctor", "doctor", "Show the resolved configuration and check every part."
    ),
    "users": LazyCommand("eko.cli.users", "app", "Create and list users; make them pro or not."),
    "rooms": LazyCommand("eko.cli.rooms", "app", "Rooms: list, show, import, attach files."),
    "db": LazyCommand("eko.cli.db", "app", "Database schema and vectors."),
    "bench": LazyCommand("eko.cli.bench", "app", "Benchmarks; each prints a table."),
    "cache": LazyCommand("eko.cli.cache", "app", "The memory guard (semantic response cache)."),
    "docs": LazyCommand("eko.cli.docs", "app", "Documentation scopes for the chat engine."),
    "memory": LazyCommand("eko.cli.memory", "app", "Facts, self-knowledge and goals."),
    "summaries": LazyCommand("eko.cli.memory", "summaries_app", "A room's summaries."),
    "topics": LazyCommand("eko.cli.memory", "topics_app", "A room's topics."),
    "reflect": LazyCommand("eko.cli.lobby", "reflect", "Reflect now in a lobby (speak up?)."),
    "lobby": LazyCommand(
        "eko.cli.lobby", "app", "A lobby's activity window now, reflection stats and history."
    ),
}


class LazyGroup(TyperGroup):
    """A TyperGroup whose subcommands are imported on first use (see COMMANDS).

    Contexts and formatters are typed Any: recent Typer vendors its own Click, older ones use
    Click itself, and neither exposes one public name for both.
    """

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._listing_only = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(name for name in super().list_commands(ctx) if name not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        loaded = super().get_command(ctx, cmd_name)
        lazy = COMMANDS.get(cmd_name)
        if loaded is not None or lazy is None:
            return loaded
        if self._listing_only:
            # Help only needs the name and one line: a stand-in, nothing imported.
            return TyperCommand(cmd_name, help=lazy.help)
        command = lazy.load(cmd_name)
        self.add_command(command, cmd_name)
        return command

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing_only = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing_only = False

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        # TyperGroup suggests only among commands already loaded: suggest among all of them.
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in self.list_commands(ctx):
            matches = get_close_matches(name, self.list_commands(ctx))
            hint = f" Did you mean {', '.join(repr(m) for m in matches)}?" if matches else ""
            ctx.fail(f"No such command {name!r}.{hint}")
        return super().resolve_command(ctx, args)


app = typer.Typer(
    name="eko",
    cls=LazyGroup,
    help="Eko, a self-hostable assistant server.",
    no_args_is_help=True,
    add_completion=False,
)


@app.callback()
def root() -> None:
    """Eko, a self-hostable assistant server."""


def main() -> None:
    app()
