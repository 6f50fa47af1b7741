"""Load the sqlite-vec extension into Python's own sqlite3 module, on a stock CPython.

Many CPython builds (pyenv's default among them) are compiled without
`enable_load_extension`, so `conn.load_extension()` does not exist. SQLite itself can still
register an extension for every connection opened afterwards through
`sqlite3_auto_extension()`, which we call with ctypes on the very libsqlite3 that Python's
`_sqlite3` module is linked to. If that fails, callers fall back to exact NumPy search, loudly.
"""

from __future__ import annotations

import ctypes
import re
import sqlite3
from pathlib import Path

import structlog

log = structlog.get_logger("eko.store")

_state: dict[str, bool] = {}  # process-wide: SQLite's auto-extension list is process-wide too


def register() -> bool:
    """Make sqlite-vec available to every later sqlite3 connection. Returns True if it works."""
    if "ok" in _state:
        return _state["ok"]
    ok = _try_register()
    _state["ok"] = ok
    return ok


def _try_register() -> bool:
    try:
        import sqlite_vec
    except ImportError:
        log.warning("sqlite_vec.missing", fix="pip install sqlite-vec")
        return False
    extension = Path(sqlite_vec.loadable_path() + ".so")
    if not extension.exists():
        extension = Path(sqlite_vec.loadable_path())
    try:
        library = _linked_sqlite_library()
        vec = ctypes.CDLL(str(extension))
        init = ctypes.cast(vec.sqlite3_vec_init, ctypes.c_void_p)
        library.sqlite3_auto_extension.argtypes = [ctypes.c_void_p]
        rc = library.sqlite3_auto_extension(init)
        if rc != 0:
            raise OSError(f"sqlite3_auto_extension returned {rc}")
        probe = sqlite3.connect(":memory:")
        try:
            probe.execute("select vec_version()").fetchone()
        finally:
            probe.close()
    except Exception as exc:  # any failure means: no sqlite-vec, use NumPy
        log.warning(
            "sqlite_vec.unavailable",
            error=str(exc),
            fallback="exact NumPy search (fine below ~50k vectors)",
        )
        return False
    return True


def _linked_sqlite_library() -> ctypes.CDLL:
    """The libsqlite3 that `_sqlite3` uses: the mapped shared library, else `_sqlite3` itself."""
    import _sqlite3

    maps = Path("/proc/self/maps")
    if maps.exists():
        for line in maps.read_text().splitlines():
            match = re.search(r"(/\S*libsqlite3\S*\.so[\S]*)", line)
            if match:
                return ctypes.CDLL(match.group(1))
    # Statically linked builds (or no /proc): the symbols live in the module itself.
    return ctypes.CDLL(_sqlite3.__file__)
