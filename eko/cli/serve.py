"""`eko serve`: the API and the web page, with a banner saying which model answers."""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer
import uvicorn
from fastapi import FastAPI
from rich.markup import escape
from rich.panel import Panel

from eko.api.app import create_app
from eko.cli.common import console, fail, load_settings
from eko.cli.server_address import recorded
from eko.config import Settings, mask_url
from eko.logging import configure_logging

PROVIDER_HINT = (
    "To answer with a real model, set one line, e.g.\n"
    '  EKO_LLM_PROVIDERS=\'[{"kind":"openai","base_url":"https://api.openai.com/v1",'
    '"model":"gpt-4o-mini","api_key":"sk-..."},{"kind":"local"}]\'\n'
    "(any OpenAI-compatible endpoint: DeepSeek, Mistral, Groq, vLLM, Ollama, llama.cpp server)"
)


def banner(settings: Settings) -> Panel:
    lines = [f"[bold]Eko[/] on http://{settings.host}:{settings.port}"]
    lines.append(f"data directory (EKO_HOME): {settings.home}")
    lines.append(f"database: {mask_url(settings.database_url)}")
    for index, provider in enumerate(settings.llm_providers):
        role = "primary" if index == 0 else "fallback"
        if provider.kind == "local":
            from eko.llm.bundled import describe_local_model, switch_hint

            active = describe_local_model(settings.local_model, settings.local_model_path)
            lines.append(f"model ({role}): local {escape(active)}")
            lines.append(
                f"  {escape(switch_hint(settings.local_model, settings.local_model_path))}"
            )
        else:
            lines.append(
                f"model ({role}): {provider.label} {provider.model} at {provider.base_url}"
            )
    lines.append(f"embedder: {settings.embedder}")
    if all(p.kind == "local" for p in settings.llm_providers):
        lines.append(
            "\n[yellow]A small local model on the CPU: short everyday answers, a few seconds "
            "each; not a large hosted model.[/]"
        )
    return Panel("\n".join(lines), title="eko serve", expand=False)


def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (EKO_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (EKO_PORT).")] = None,
    migrate: Annotated[bool, typer.Option(help="Apply migrations at start.")] = True,
    workers: Annotated[
        int | None,
        typer.Option(help="API worker processes (EKO_WORKERS; PostgreSQL only).", min=1),
    ] = None,
) -> None:
    """Run the API and the web page."""
    settings = load_settings(host=host, port=port, workers=workers)
    configure_logging(settings.log_level)
    if settings.workers > 1:
        refuse_unshareable(settings)
    console.print(banner(settings))
    if all(p.kind == "local" for p in settings.llm_providers):
        # Outside the panel and unwrapped, so the line can be copied as is.
        console.print(PROVIDER_HINT, soft_wrap=True, highlight=False, markup=False)
    with recorded(settings.home, settings.host, settings.port):  # for `eko doctor`
        if settings.workers > 1:
            serve_workers(settings, migrate=migrate)
            return
        app = create_app(settings, migrate=migrate)
        uvicorn.run(app, **server_options(settings))


# On SIGTERM/SIGINT uvicorn stops accepting, lets open requests finish for this long (live
# event streams never finish by themselves), then the app drains: accepted messages are still
# answered and stored, running jobs get EKO_JOBS_SHUTDOWN_GRACE_S.
GRACEFUL_SHUTDOWN_S = 10


def server_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's options for one process or several (logging is Eko's own)."""
    return {
        "host": settings.host,
        "port": settings.port,
        "log_config": None,
        "access_log": False,
        "timeout_graceful_shutdown": GRACEFUL_SHUTDOWN_S,
        "timeout_keep_alive": settings.http_keep_alive_s,
    }


def refuse_unshareable(settings: Settings) -> None:
    """Several API processes need a database and a model they can all reach."""
    if settings.is_sqlite:
        fail(
            f"--workers {settings.workers} needs PostgreSQL: an SQLite file is one process's",
            fix="set EKO_DATABASE_URL=postgresql+asyncpg://… (docs/deploy.md), or run one worker",
        )
    if any(p.kind == "local" for p in settings.llm_providers):
        fail(
            f"--workers {settings.workers}: the in-process local model cannot be shared by "
            "several processes (each would load its own copy)",
            fix="run `eko model serve` and set the EKO_LLM_PROVIDERS line it prints "
            "(docs/deploy.md)",
        )


def serve_workers(settings: Settings, *, migrate: bool) -> None:
    """N uvicorn worker processes; each builds its app from the environment (EKO_*)."""
    if migrate:
        from eko.cli.common import run
        from eko.store.db import Database
        from eko.store.migrate import upgrade

        async def migrate_once() -> None:
            database = Database(settings.database_url)
            try:
                await upgrade(database)
            finally:
                await database.dispose()

        run(migrate_once())  # once, before the workers start
    os.environ["EKO_WORKERS"] = str(settings.workers)
    uvicorn.run(
        "eko.cli.serve:app_from_environment",
        factory=True,
        workers=settings.workers,
        **server_options(settings),
    )


def app_from_environment() -> FastAPI:
    """The app of one worker process (`eko serve --workers N`): settings from EKO_* and .env;
    the parent applied the migrations."""
    settings = load_settings()
    configure_logging(settings.log_level)
    return create_app(settings, migrate=False)
