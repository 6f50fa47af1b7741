"""Where Eko keeps its data: the default data directory, the SQLite URL made from it, and the
masking of a database URL's password for display."""

from __future__ import annotations

from pathlib import Path

DATABASE_FILE_NAME = "eko.db"


def default_home() -> Path:
    """Eko's data directory when EKO_HOME is not set: the platform's user data directory
    (~/.local/share/eko on Linux, ~/Library/Application Support/eko on macOS), so the server
    and every command find the same database whatever the working directory."""
    from platformdirs import user_data_path  # only when EKO_HOME is not given

    return user_data_path("eko", appauthor=False)


def sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


def mask_url(url: str) -> str:
    """Hide the password in a database URL."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    creds, _, host = rest.rpartition("@")
    user, colon, _password = creds.partition(":")
    return f"{scheme}://{user}{':****' if colon else ''}@{host}"
