"""What every command shares: settings, a console, running async code, clean failures."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, NoReturn, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console

from eko.config import Settings

T = TypeVar("T")

console = Console()
err_console = Console(stderr=True)


def fail(message: str, *, fix: str | None = None, code: int = 1) -> NoReturn:
    err_console.print(f"[bold red]error:[/] {message}")
    if fix:
        err_console.print(f"[yellow]fix:[/] {fix}")
    raise typer.Exit(code)


def load_settings(**overrides: Any) -> Settings:
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        lines = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        fail(f"invalid configuration: {lines}", fix="check your EKO_* variables and .env")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)
