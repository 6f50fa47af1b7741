"""CLI start-up time: `eko --help`, `eko users list`, … run as fresh processes, wall clock.

What a person feels when typing a command is the whole process: interpreter start, imports,
settings, the database round trip. So each command runs as a subprocess (N times, after one
warm-up run that fills the OS file cache) against a throwaway EKO_HOME with a migrated
database, and the table shows the median and p95 wall time.

    .venv/bin/eko bench cli            # or: python -m eko_bench.bench_cli --runs 20
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from eko.config import Settings
from eko_bench.stats import percentile

RUNS = 10
# Each is argv after `eko`. `users list` touches the database; the others must not need to.
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--help",),
    ("users", "--help"),
    ("users", "list"),
    ("rooms", "list"),
    ("cache", "--help"),
)


@dataclass(frozen=True)
class Timing:
    command: str
    median_s: float
    p95_s: float
    runs: int
    failures: int


def eko_argv() -> list[str]:
    """The `eko` script installed beside this interpreter (what a person runs), else
    `python -m eko.cli`."""
    script = Path(sys.executable).with_name("eko")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "eko.cli"]


def time_command(args: Sequence[str], *, env: dict[str, str], cwd: Path, runs: int) -> Timing:
    argv = [*eko_argv(), *args]
    subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)  # warm-up
    durations: list[float] = []
    failures = 0
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
        durations.append(time.perf_counter() - start)
        failures += done.returncode != 0
    return Timing(
        command="eko " + " ".join(args),
        median_s=statistics.median(durations),
        p95_s=percentile(durations, 0.95),
        runs=runs,
        failures=failures,
    )


def measure(runs: int = RUNS, commands: Sequence[Sequence[str]] = COMMANDS) -> list[Timing]:
    with tempfile.TemporaryDirectory(prefix="eko-bench-cli-") as tmp:
        home = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("EKO_")}
        env["EKO_HOME"] = str(home)
        # A migrated database with one user, so `users list` measures a real round trip.
        for setup in (("db", "upgrade"), ("users", "create", "Bench")):
            subprocess.run(
                [*eko_argv(), *setup], env=env, cwd=home, capture_output=True, check=True
            )
        return [time_command(args, env=env, cwd=home, runs=runs) for args in commands]


def render(timings: Sequence[Timing]) -> Table:
    table = Table(title=f"CLI start-up, wall clock per process ({timings[0].runs} runs each)")
    table.add_column("command")
    table.add_column("median s", justify="right")
    table.add_column("p95 s", justify="right")
    table.add_column("failed runs", justify="right")
    for timing in timings:
        table.add_row(
            timing.command, f"{timing.median_s:.3f}", f"{timing.p95_s:.3f}", str(timing.failures)
        )
    return table


async def run(*, settings: Settings, console: Console) -> None:
    del settings  # every run uses its own throwaway EKO_HOME, never the configured one
    timings = await asyncio.to_thread(measure)
    console.print(render(timings))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    options = parser.parse_args()
    Console().print(render(measure(options.runs)))


if __name__ == "__main__":
    main()
