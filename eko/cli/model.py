"""`eko model serve`: the bundled (or configured) local model as its own OpenAI-compatible
server (llama.cpp's, from llama-cpp-python[server]), so several API workers can share it —
the in-process local model cannot be shared across processes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from eko.cli.common import console, fail, load_settings

app = typer.Typer(help="The local model as a server.", no_args_is_help=True)

SERVED_MODEL_NAME = "eko-local"


def provider_line(host: str, port: int) -> str:
    """The one line that registers the served model as Eko's provider."""
    provider = {
        "kind": "openai",
        "name": "local-server",
        "base_url": f"http://{host}:{port}/v1",
        "model": SERVED_MODEL_NAME,
        "api_key": "none",
        # llama-cpp-python's server takes the schema inside json_object mode.
        "structured_output": "json_object",
    }
    return f"EKO_LLM_PROVIDERS='{json.dumps([provider], separators=(',', ':'))}'"


def model_file() -> Path:
    settings = load_settings()
    if settings.local_model_path is not None:
        return settings.local_model_path
    from eko.llm.bundled.assembly import BundledModelError, ensure_bundled_model
    from eko.llm.bundled.catalog import get_bundled_model

    try:
        return ensure_bundled_model(get_bundled_model(settings.local_model), settings.models_dir)
    except BundledModelError as exc:
        fail(str(exc), fix="reinstall Eko (`scripts/setup`) or set EKO_LOCAL_MODEL_PATH")


def server_command(path: Path, *, host: str, port: int, n_ctx: int, threads: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(path),
        "--model_alias",
        SERVED_MODEL_NAME,
        "--host",
        host,
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--n_threads",
        str(threads),
    ]


@app.command("serve")
def serve(
    host: Annotated[str, typer.Option(help="Bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8081,
) -> None:
    """Serve the local model over an OpenAI-compatible API (llama.cpp's server)."""
    try:
        import llama_cpp.server  # noqa: F401  (only checks that the extra is installed)
    except ImportError:
        fail(
            "llama.cpp's server is not installed",
            fix="pip install 'llama-cpp-python[server]' (Eko's own install includes it)",
        )
    settings = load_settings()
    path = model_file()
    console.print(
        f"serving {path.name} on http://{host}:{port}/v1 (model name {SERVED_MODEL_NAME})"
    )
    console.print("Register it as Eko's provider with this line (e.g. in .env):")
    console.print(provider_line(host, port), soft_wrap=True, highlight=False, markup=False)
    command = server_command(
        path, host=host, port=port, n_ctx=settings.local_n_ctx, threads=settings.local_threads
    )
    sys.stdout.flush()
    os.execv(command[0], command)  # the server replaces this process: signals reach it
