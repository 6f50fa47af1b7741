"""Assembles the command groups."""

from __future__ import annotations

import typer

from eko.cli import bench, cache, chat, db, docs, doctor, memory, serve, users

app = typer.Typer(
    name="eko",
    help="Eko, a self-hostable assistant server.",
    no_args_is_help=True,
    add_completion=False,
)
app.command("serve")(serve.serve)
app.command("chat")(chat.chat)
app.command("doctor")(doctor.doctor)
app.add_typer(users.app, name="users")
app.add_typer(db.app, name="db")
app.add_typer(bench.app, name="bench")
app.add_typer(cache.app, name="cache")
app.add_typer(docs.app, name="docs")
app.add_typer(memory.app, name="memory")
app.add_typer(memory.summaries_app, name="summaries")
app.add_typer(memory.topics_app, name="topics")


def main() -> None:
    app()
