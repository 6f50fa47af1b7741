"""Child processes serving HTTP on 127.0.0.1: started, awaited until ready, always stopped.

The load harness runs the fake upstream and Eko itself as real processes behind real sockets,
so what it measures includes uvicorn, the connection pool and process start-up, as in
production. Each process logs to a file in the run's work directory; a start-up failure
raises with the log's tail, so a broken server says why instead of timing out silently.
"""

from __future__ import annotations

import asyncio
import resource
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import httpx

# Consecutive 5xx answers to the readiness URL after which a starting server is declared broken.
_READY_5XX_LIMIT = 5


class ServerFailed(RuntimeError):
    """A child server exited or never became ready."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the child binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def raise_open_files_limit(wanted: int = 8192) -> None:
    """Lift the soft limit on open files toward `wanted` (a burst holds one socket a request);
    children started afterwards inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


class ServerProcess:
    """One child process; `async with` starts it and waits until `ready_url` answers 200."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        ready_url: str,
        env: dict[str, str],
        cwd: Path,
        start_timeout_s: float = 120.0,
        stop_grace_s: float = 10.0,
    ) -> None:
        self.name = name
        self.log_path = cwd / f"{name}.log"
        self._argv = list(argv)
        self._ready_url = ready_url
        self._env = env
        self._cwd = cwd
        self._start_timeout_s = start_timeout_s
        self._stop_grace_s = stop_grace_s
        self._process: subprocess.Popen[bytes] | None = None

    async def __aenter__(self) -> ServerProcess:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)

    async def start(self) -> None:
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(  # noqa: ASYNC220 - returns at once
                self._argv,
                env=self._env,
                cwd=self._cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            await self._wait_ready()
        except BaseException:
            await asyncio.to_thread(self.stop)
            raise

    async def _wait_ready(self) -> None:
        deadline = time.monotonic() + self._start_timeout_s
        server_errors = 0
        async with httpx.AsyncClient(timeout=5.0) as client:
            while True:
                if self._process is not None and self._process.poll() is not None:
                    raise ServerFailed(
                        f"{self.name} exited with code {self._process.returncode} before "
                        f"answering {self._ready_url}:\n{self.log_tail()}"
                    )
                try:
                    status = (await client.get(self._ready_url)).status_code
                except httpx.TransportError:
                    status = None
                if status == 200:
                    return
                # Listening but failing: the app is broken, waiting longer will not help.
                server_errors = server_errors + 1 if status is not None and status >= 500 else 0
                if server_errors >= _READY_5XX_LIMIT:
                    raise ServerFailed(
                        f"{self.name} answered {self._ready_url} with {status} "
                        f"{server_errors} times in a row:\n{self.log_tail()}"
                    )
                if time.monotonic() > deadline:
                    raise ServerFailed(
                        f"{self.name} did not answer {self._ready_url} within "
                        f"{self._start_timeout_s:.0f} s:\n{self.log_tail()}"
                    )
                await asyncio.sleep(0.2)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after the grace period; waits for the exit either way."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=self._stop_grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=self._stop_grace_s)

    def kill(self) -> None:
        """SIGKILL now (no shutdown code runs, as in a crash); waits for the exit."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.kill()
        process.wait(timeout=self._stop_grace_s)

    def log_tail(self, lines: int = 20, max_chars: int = 4000) -> str:
        """The last lines, cut to `max_chars` (a traceback logged as JSON is one long line)."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        tail = "\n".join(text.splitlines()[-lines:])
        return tail if len(tail) <= max_chars else "…" + tail[-max_chars:]
