"""The table of scenario (d), steady load: one row per backend and API-worker count."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from eko_bench.load.steady import SteadyResult

COLUMNS = (
    "backend",
    "workers",
    "users",
    "replies",
    "replies/s",
    "ideal/s",
    "of ideal",
    "calls/reply",
    "+p50 ms",
    "+p95 ms",
    "+p99 ms",
    "errors",
)


def steady_table(results: Sequence[SteadyResult]) -> Table:
    first = results[0] if results else None
    title = "Steady load (d)"
    if first is not None:
        title += (
            f": {first.users} users, each posting one message after the other for "
            f"{first.duration_s:g} s; fake model answering each call in {first.latency_s:g} s"
        )
    table = Table(title=title)
    for column in COLUMNS:
        table.add_column(column, justify="left" if column == "backend" else "right", no_wrap=True)
    for result in results:
        ideal = result.ideal
        calls = result.calls_per_reply
        table.add_row(
            result.backend,
            str(result.workers),
            str(result.users),
            str(result.ok),
            f"{result.throughput:.1f}",
            f"{ideal:.1f}" if ideal is not None else "-",
            f"{100 * result.throughput / ideal:.0f}%" if ideal else "-",
            f"{calls:.2f}" if calls is not None else "-",
            _ms(result.added_percentile(0.5)),
            _ms(result.added_percentile(0.95)),
            _ms(result.added_percentile(0.99)),
            _errors(result),
        )
    table.caption = (
        "workers: API worker processes (eko serve --workers). ideal = users / (model calls "
        "per reply × latency): every user waiting on the model only. +p50/+p95/+p99: added "
        "latency, the response time of a 2xx answer minus calls per reply × latency (what "
        "HTTP, database, queueing and the pipeline add). errors: non-2xx answers and requests "
        "with no answer."
    )
    return table


def _ms(value: float | None) -> str:
    return f"{value * 1000:.0f}" if value is not None else "-"


def _errors(result: SteadyResult) -> str:
    if not result.errors:
        return "0"
    parts = [
        f"{'no answer' if status is None else status}×{n}"
        for status, n in sorted(result.statuses.items(), key=str)
        if status is None or not 200 <= status < 300
    ]
    return f"{result.errors} ({', '.join(parts)})"
