"""Eko itself as a real server process (`eko serve`), configured for a load run.

The environment is built from scratch for EKO_* (the caller's own EKO_* variables and .env do
not leak in: the process runs in the run's work directory), so a run is reproducible: one
database, the providers given, memory extraction and summaries off (each would add model calls
after every reply, which is not what the scenarios measure).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import TracebackType
from typing import Any

from eko_bench.load.processes import ServerProcess, free_port


def openai_provider(name: str, base_url: str, *, timeout_s: float) -> dict[str, Any]:
    """One entry of EKO_LLM_PROVIDERS for an OpenAI-compatible endpoint (the fake upstream)."""
    return {
        "kind": "openai",
        "name": name,
        "base_url": base_url,
        "model": "fake",
        "api_key": "fake",
        "timeout_s": timeout_s,
    }


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without any EKO_* variable, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EKO_")}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def eko_env(
    *,
    database_url: str,
    providers: list[dict[str, Any]],
    settings: dict[str, str] | None = None,
) -> dict[str, str]:
    values = {
        "EKO_DATABASE_URL": database_url,
        "EKO_LLM_PROVIDERS": json.dumps(providers),
        "EKO_MEMORY_EXTRACT_ENABLED": "false",
        "EKO_SUMMARIES_ENABLED": "false",
        "EKO_LOG_LEVEL": "WARNING",
    }
    values.update(settings or {})
    return child_env(values)


class EkoServer:
    """`python -m eko.cli serve` on a free port; `async with` starts it (migrations included)
    and waits for /health, then stops it."""

    def __init__(
        self,
        *,
        name: str,
        database_url: str,
        providers: list[dict[str, Any]],
        workdir: Path,
        settings: dict[str, str] | None = None,
        start_timeout_s: float = 120.0,
    ) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.database_url = database_url
        self._process = ServerProcess(
            name,
            [sys.executable, "-m", "eko.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
            ready_url=f"{self.url}/health",
            env=eko_env(database_url=database_url, providers=providers, settings=settings),
            cwd=workdir,
            start_timeout_s=start_timeout_s,
        )

    @property
    def log_path(self) -> Path:
        return self._process.log_path

    def log_tail(self, lines: int = 40) -> str:
        return self._process.log_tail(lines)

    async def __aenter__(self) -> EkoServer:
        await self._process.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._process.__aexit__(exc_type, exc, tb)
