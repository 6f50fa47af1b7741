"""Where the running `eko serve` listens, recorded in the data directory for `eko doctor`.

`eko serve --port 9000` without EKO_PORT left `eko doctor` asking port 8000 (#37). The server
writes its host, port and process id to EKO_HOME/server.json while it runs; the doctor asks
that address first, then the configured one (EKO_HOST:EKO_PORT).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

RECORD_NAME = "server.json"


def _record_path(home: Path) -> Path:
    return home / RECORD_NAME


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def local_host(host: str) -> str:
    """The address to reach a server bound to `host` from this machine."""
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host


@contextlib.contextmanager
def recorded(home: Path, host: str, port: int) -> Iterator[None]:
    """Records this process's address while the block runs (a server that dies without
    removing it leaves a record whose process is gone: `read_recorded` ignores it)."""
    path = _record_path(home)
    mine = {"host": host, "port": port, "pid": os.getpid()}
    with contextlib.suppress(OSError):
        path.write_text(json.dumps(mine), encoding="utf-8")
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            if json.loads(path.read_text(encoding="utf-8")) == mine:
                path.unlink()


def read_recorded(home: Path) -> tuple[str, int] | None:
    """(host, port) of a running server recorded in `home`, or None."""
    try:
        record = json.loads(_record_path(home).read_text(encoding="utf-8"))
        host, port, pid = str(record["host"]), int(record["port"]), int(record["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (host, port) if _process_alive(pid) else None
