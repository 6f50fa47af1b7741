"""`eko serve`: the API and the web page, with a banner saying which model answers."""

from __future__ import annotations

from typing import Annotated

import typer
import uvicorn
from rich.panel import Panel

from eko.api.app import create_app
from eko.cli.common import console, load_settings
from eko.config import Settings
from eko.logging import configure_logging

PROVIDER_HINT = (
    "To answer with a real model, set one line, e.g.\n"
    '  EKO_LLM_PROVIDERS=\'[{"kind":"openai","base_url":"https://api.openai.com/v1",'
    '"model":"gpt-4o-mini","api_key":"sk-..."},{"kind":"local"}]\'\n'
    "(any OpenAI-compatible endpoint: DeepSeek, Mistral, Groq, vLLM, Ollama, llama.cpp server)"
)


def banner(settings: Settings) -> Panel:
    lines = [f"[bold]Eko[/] on http://{settings.host}:{settings.port}"]
    db = "SQLite file" if settings.is_sqlite else "PostgreSQL"
    lines.append(f"database: {db}")
    for index, provider in enumerate(settings.llm_providers):
        role = "primary" if index == 0 else "fallback"
        if provider.kind == "local":
            path = settings.local_model_path or "bundled Gemma 3 270M base (GGUF, llama.cpp, CPU)"
            lines.append(f"model ({role}): local {path}")
        else:
            lines.append(
                f"model ({role}): {provider.label} {provider.model} at {provider.base_url}"
            )
    lines.append(f"embedder: {settings.embedder}")
    if all(p.kind == "local" for p in settings.llm_providers):
        lines.append(
            "\n[yellow]The bundled model is a tiny BASE model: it proves the pipeline offline, "
            "not answer quality.[/]"
        )
    return Panel("\n".join(lines), title="eko serve", expand=False)


def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (EKO_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (EKO_PORT).")] = None,
    migrate: Annotated[bool, typer.Option(help="Apply migrations at start.")] = True,
) -> None:
    """Run the API and the web page."""
    settings = load_settings(host=host, port=port)
    configure_logging(settings.log_level)
    console.print(banner(settings))
    if all(p.kind == "local" for p in settings.llm_providers):
        # Outside the panel and unwrapped, so the line can be copied as is.
        console.print(PROVIDER_HINT, soft_wrap=True, highlight=False, markup=False)
    app = create_app(settings, migrate=migrate)
    uvicorn.run(app, host=settings.host, port=settings.port, log_config=None, access_log=False)
