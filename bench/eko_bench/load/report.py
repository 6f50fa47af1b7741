"""The table `eko bench load` prints: one per backend, one row per scenario."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from eko_bench.load.scenarios import ScenarioResult

COLUMNS = (
    "scenario",
    "requests",
    "2xx",
    "503",
    "other 4xx",
    "5xx",
    "no answer",
    "stored",
    "answered",
    "p50 s",
    "p95 s",
    "/health p95 ms",
)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (as the other benchmarks compute it); None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[round(q * (len(ordered) - 1))]


def timed_seconds(result: ScenarioResult) -> list[float]:
    """The response times the p50/p95 columns describe: the 2xx answers, and for the hung
    primary all but the first (its time is in the notes)."""
    times = result.ok_seconds
    return times[1:] if result.scenario == "c" else times


def load_table(backend: str, results: Sequence[ScenarioResult], *, latency_s: float) -> Table:
    table = Table(
        title=f"Load through real sockets: {backend} (fake model answering in {latency_s:g} s)"
    )
    for column in COLUMNS:
        table.add_column(column, justify="left" if column == "scenario" else "right", no_wrap=True)
    for result in results:
        times = timed_seconds(result)
        health = percentile(result.health.seconds, 0.95)
        health_cell = f"{health * 1000:.0f}" if health is not None else "-"
        if result.health.failures:
            health_cell += f" ({result.health.failures} failed)"
        table.add_row(
            result.label,
            str(result.requests),
            str(result.ok),
            str(result.unavailable),
            str(result.client_errors),
            str(result.server_errors),
            str(result.no_response),
            str(result.counts.user_messages),
            str(result.counts.replies),
            _seconds(percentile(times, 0.5)),
            _seconds(percentile(times, 0.95)),
            health_cell,
        )
    table.caption = (
        "stored / answered: user messages / assistant replies in the database after the burst "
        "settled. p50/p95: response time of 2xx answers. no answer: client timeout or "
        "connection error. model calls: requests the fake upstream answered."
    )
    return table


def notes(results: Sequence[ScenarioResult]) -> list[str]:
    """One line per scenario with what the table has no column for."""
    return [f"{result.label}: {'; '.join(result.notes)}" for result in results if result.notes]


def _seconds(value: float | None) -> str:
    return f"{value:.2f}" if value is not None else "-"
