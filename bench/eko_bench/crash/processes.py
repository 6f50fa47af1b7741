"""Eko as real processes for a crash round: `eko serve` and, on PostgreSQL, one `eko worker`.

Each can be started, SIGKILLed (no shutdown code runs, as in a power cut or an OOM kill) and
started again on the same database. The server always comes back on the same port, so a
client's view of "the server" does not change across the crash. Logs go to the round's work
directory, one file per start (`eko-serve-1.log`, `eko-serve-2.log`, …), so what the restarted
server said about the crash is kept apart.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from eko_bench.load.eko_server import child_env
from eko_bench.load.processes import ServerFailed, ServerProcess, free_port

# `eko worker` prints this once its jobs backend runs (eko/cli/worker.py).
_WORKER_READY = b"eko worker:"


def eko_settings(
    *,
    database_url: str,
    stub_base_url: str,
    home: Path,
    separate_worker: bool,
    request_timeout_s: float,
) -> dict[str, str]:
    """EKO_* for the round's processes: the stub as the only chat provider and as the embedder
    (no model loads), memory extraction and summaries on (their jobs are what the bench
    checks), quick recovery of jobs whose worker died."""
    provider: dict[str, Any] = {
        "kind": "openai",
        "name": "stub",
        "base_url": stub_base_url,
        "model": "fake",
        "api_key": "stub",
        "timeout_s": request_timeout_s,
    }
    return {
        "EKO_HOME": str(home),
        "EKO_DATABASE_URL": database_url,
        "EKO_LLM_PROVIDERS": json.dumps([provider]),
        "EKO_EMBEDDER": "openai",
        "EKO_EMBED_BASE_URL": stub_base_url,
        "EKO_EMBED_MODEL": "text-embedding-3-small",
        "EKO_MEMORY_EXTRACT_ENABLED": "true",
        "EKO_SUMMARIES_ENABLED": "true",
        "EKO_JOBS_WORKER_IN_PROCESS": "false" if separate_worker else "true",
        "EKO_JOBS_STALLED_AFTER_S": "5",
        "EKO_JOBS_POLL_INTERVAL_S": "0.5",
        "EKO_LOG_LEVEL": "WARNING",
    }


class WorkerProcess:
    """`eko worker` (no HTTP): started, awaited until it says it runs, killed or stopped."""

    def __init__(self, *, env: dict[str, str], cwd: Path, start_timeout_s: float) -> None:
        self._env = env
        self._cwd = cwd
        self._start_timeout_s = start_timeout_s
        self._process: subprocess.Popen[bytes] | None = None
        self._starts = 0
        self.log_path = cwd / "eko-worker-0.log"

    async def start(self) -> None:
        self._starts += 1
        self.log_path = self._cwd / f"eko-worker-{self._starts}.log"
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(  # noqa: ASYNC220 - returns at once
                [sys.executable, "-m", "eko.cli", "worker"],
                env=self._env,
                cwd=self._cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + self._start_timeout_s
        while _WORKER_READY not in await asyncio.to_thread(self.log_path.read_bytes):
            if self._process.poll() is not None or time.monotonic() > deadline:
                tail = self.log_path.read_text(errors="replace")[-3000:]
                self.stop()
                raise ServerFailed(f"eko worker did not start:\n{tail}")
            await asyncio.sleep(0.2)

    def kill(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(timeout=10)

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


class EkoProcesses:
    """The server (and the worker when `separate_worker`) of one round, on one database."""

    def __init__(
        self,
        *,
        settings: dict[str, str],
        workdir: Path,
        separate_worker: bool,
        start_timeout_s: float = 120.0,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = child_env(settings)
        self._workdir = workdir
        self._start_timeout_s = start_timeout_s
        self._starts = 0
        self.server: ServerProcess | None = None
        self.worker = (
            WorkerProcess(env=self.env, cwd=workdir, start_timeout_s=start_timeout_s)
            if separate_worker
            else None
        )

    async def start(self) -> None:
        """The server (it migrates the database), then the worker."""
        self._starts += 1
        self.server = ServerProcess(
            f"eko-serve-{self._starts}",
            [
                sys.executable,
                "-m",
                "eko.cli",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
            ready_url=f"{self.url}/health",
            env=self.env,
            cwd=self._workdir,
            start_timeout_s=self._start_timeout_s,
        )
        await self.server.start()
        if self.worker is not None:
            await self.worker.start()

    def kill_server(self) -> None:
        if self.server is not None:
            self.server.kill()

    def kill_worker(self) -> None:
        if self.worker is not None:
            self.worker.kill()

    def stop(self) -> None:
        """SIGTERM (graceful) whatever still runs."""
        if self.worker is not None:
            self.worker.stop()
        if self.server is not None:
            self.server.stop()

    def logs(self) -> list[Path]:
        return sorted(self._workdir.glob("eko-*.log"))
