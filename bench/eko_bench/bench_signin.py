"""Sign-in time: the right password, a wrong password, an unknown name (issue #37: a wrong
password and an unknown name must take about the same time, so the time does not tell whether
a name exists). Through the accounts service with the real argon2id hasher, on a temp SQLite
database; the rate limit is raised out of the way.

`run()` is what `eko bench signin` shows: median, p90, min and max of each case.
"""

from __future__ import annotations

import contextlib
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from eko.accounts.errors import AccountError
from eko.accounts.passwords import Passwords
from eko.accounts.service import Accounts
from eko.config import Settings
from eko.store.db import Database
from eko.store.migrate import upgrade

ROUNDS = 30
PASSWORD = "correct horse battery"


async def run(*, settings: Settings, console: Console) -> None:
    del settings  # its own database and limits
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'eko.db'}"
        limits = Settings(
            database_url=url,
            signin_max_failures_per_name=1000,
            signin_max_failures_per_address=10_000,
            _env_file=None,
        )
        database = Database(url)
        try:
            await upgrade(database)
            accounts = Accounts(database, limits, Passwords())
            await accounts.create_operator(name="Camille", password=PASSWORD)
            cases = {
                "right password": ("Camille", PASSWORD),
                "wrong password": ("Camille", "not the password"),
                "unknown name": ("Nobody", "not the password"),
            }
            times: dict[str, list[float]] = {case: [] for case in cases}
            for _ in range(ROUNDS):  # interleaved, so load changes hit every case alike
                for case, (name, password) in cases.items():
                    start = time.perf_counter()
                    with contextlib.suppress(AccountError):  # the two refusals
                        await accounts.sign_in(name=name, password=password, address="bench")
                    times[case].append((time.perf_counter() - start) * 1000)
        finally:
            await database.dispose()

    table = Table(title=f"Sign-in (argon2id, SQLite, {ROUNDS} rounds each, ms)")
    for column in ("case", "median", "p90", "min", "max"):
        table.add_column(column, justify="left" if column == "case" else "right")
    for case, values in times.items():
        ordered = sorted(values)
        p90 = ordered[int(0.9 * (len(ordered) - 1))]
        table.add_row(
            case,
            f"{statistics.median(values):.1f}",
            f"{p90:.1f}",
            f"{ordered[0]:.1f}",
            f"{ordered[-1]:.1f}",
        )
    console.print(table)
