"""The growth table of `eko bench context`: prompt size against history length."""

from __future__ import annotations

import statistics

from rich.console import Console
from rich.table import Table

from eko_bench.context.rooms import Setup


def print_growth(console: Console, setups: list[Setup]) -> None:
    table = Table(
        title="Prompt chars vs history length (mean of probe questions, after each session)"
    )
    for column in ("history", "sessions", "full history in prompt", "recent only"):
        table.add_column(column, justify="left" if column == "history" else "right")
    for setup in setups:
        table.add_column(f"dual, every {setup.every:,}", justify="right")
    for low, high in ((0, 20_000), (20_000, 40_000), (40_000, 60_000), (60_000, 100_000)):

        def within(setup: Setup, low: int = low, high: int = high) -> list[tuple[int, ...]]:
            return [g for room in setup.rooms for g in room.growth if low <= g[0] < high]

        first = within(setups[0])
        if not first:
            continue
        row = [
            f"{low // 1000}k-{high // 1000}k chars",
            str(len(first)),
            f"{statistics.mean(g[0] for g in first):,.0f}",
            f"{statistics.mean(g[2] for g in first):,.0f}",
        ]
        for setup in setups:
            same = within(setup)
            row.append(f"{statistics.mean(g[1] for g in same):,.0f}" if same else "-")
        table.add_row(*row)
    console.print(table)
