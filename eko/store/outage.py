"""Which exceptions say the database cannot serve right now (busy or unreachable) rather than a
bug: the API answers them with a 503 before storing, the chat service retries an answer later.
"""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

# SQLSTATE classes of an unreachable or restarting server: 08 connection exception, 57P
# operator intervention (admin_shutdown, crash_shutdown, cannot_connect_now, database_dropped).
_UNAVAILABLE_SQLSTATES = ("08", "57P")
# Where a raw OSError comes from when connecting fails below SQLAlchemy (a refused TCP
# connection, a missing unix socket while PostgreSQL restarts).
_DRIVER_MODULES = ("asyncpg", "sqlalchemy", "aiosqlite")


def database_unavailable(exc: BaseException) -> bool:
    """Whether `exc` says the database cannot be reached right now (rather than a bug)."""
    if isinstance(exc, DBAPIError):
        if exc.connection_invalidated or isinstance(exc, OperationalError | InterfaceError):
            return True
        code = getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)
        return isinstance(code, str) and code.startswith(_UNAVAILABLE_SQLSTATES)
    if isinstance(exc, OSError):
        return _raised_by_driver(exc)
    return False


def database_busy_or_unavailable(exc: BaseException) -> bool:
    """`database_unavailable`, or no pooled connection was free in time."""
    return isinstance(exc, PoolTimeout) or database_unavailable(exc)


def _raised_by_driver(exc: BaseException) -> bool:
    traceback = exc.__traceback__
    while traceback is not None:
        module = str(traceback.tb_frame.f_globals.get("__name__", ""))
        if module.split(".", 1)[0] in _DRIVER_MODULES:
            return True
        traceback = traceback.tb_next
    return False
