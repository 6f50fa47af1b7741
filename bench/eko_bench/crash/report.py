"""The table `eko bench crash` prints (one per backend, a row per round and a total), and the
verdict against the targets of issue #32."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import fields

from rich.table import Table

from eko_bench.crash.audit import RoundCounts
from eko_bench.crash.round import RoundResult

# (header, RoundCounts field) in column order; the four targets are the last four.
COLUMNS = (
    ("acked", "acknowledged"),
    ("stored", "stored"),
    ("answered", "answered"),
    ("error\nstatus", "error_status"),
    ("no\nstatus", "no_status"),
    ("acked\nunanswered", "acknowledged_unanswered"),
    ("answered\ntwice", "answered_twice"),
    ("replies\nw/o jobs", "replies_without_jobs"),
    ("error but\nstored", "error_but_stored"),
)
TARGETS = ("acknowledged_unanswered", "answered_twice", "replies_without_jobs", "error_but_stored")


def total(counts: Sequence[RoundCounts]) -> RoundCounts:
    return RoundCounts(
        **{f.name: sum(getattr(c, f.name) for c in counts) for f in fields(RoundCounts)}
    )


def missed_targets(results: Sequence[RoundResult]) -> list[str]:
    """The targets (each must total 0) the rounds missed, as 'name: n'."""
    summed = total([r.counts for r in results])
    return [f"{name}: {getattr(summed, name)}" for name in TARGETS if getattr(summed, name)]


def crash_table(backend: str, results: Sequence[RoundResult], *, killed: bool) -> Table:
    what = "kill -9 during the burst, then a restart" if killed else "control: nothing killed"
    posts = results[0].counts.posts if results else 0
    table = Table(title=f"Crash rounds: {backend}, {posts} posts a round ({what})")
    table.add_column("round", justify="left", no_wrap=True)
    for header, _ in COLUMNS:
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("killed\nat s", justify="right", no_wrap=True)
    table.add_column("round\ns", justify="right", no_wrap=True)
    for result in results:
        table.add_row(
            str(result.index + 1),
            *_cells(result.counts),
            _kills(result.kills),
            f"{result.round_s:.1f}",
        )
    if results:
        table.add_row(
            "total",
            *_cells(total([r.counts for r in results])),
            "",
            f"{sum(r.round_s for r in results):.1f}",
            style="bold",
        )
    table.caption = (
        "acked: the client saw the message stored (201, or a stream's `message` event). "
        "stored / answered: user messages with the burst's client ids / with a reply. "
        "error status: 4xx/5xx answers (503 included); no status: the connection died first. "
        "Targets, each 0: acked unanswered, answered twice (more than one reply), replies "
        "w/o jobs (an after_reply.* job missing or not succeeded once the queue drained), "
        "error but stored (an error status whose message is stored). killed at: seconds "
        "into the burst (server / worker)."
    )
    return table


def _cells(counts: RoundCounts) -> list[str]:
    cells = []
    for _, name in COLUMNS:
        value = getattr(counts, name)
        cells.append(f"[red]{value}[/red]" if name in TARGETS and value else str(value))
    return cells


def _kills(kills: dict[str, float]) -> str:
    order = ("server", "worker")
    return "/".join(f"{kills[k]:.2f}" for k in order if k in kills) or "-"


def notes(results: Sequence[RoundResult]) -> list[str]:
    """What the table has no column for: pending jobs at the end, canned replies, slow
    settling, and what the restarted processes logged."""
    lines = []
    pending = sum(r.counts.pending_jobs for r in results)
    if pending:
        lines.append(f"after-reply jobs still queued or running at the audit: {pending}")
    fallback = sum(r.counts.fallback_replies for r in results)
    if fallback:
        lines.append(f"replies that are the canned apology (type fallback): {fallback}")
    if results:
        settle = max(r.settle_s for r in results)
        burst = max(r.burst_s for r in results)
        lines.append(f"longest burst {burst:.1f} s, longest settle {settle:.1f} s")
    for result in results:
        if result.first_reply_s is not None and result.last_reply_s is not None:
            lines.append(
                f"round {result.index + 1}: replies reached clients "
                f"{result.first_reply_s:.2f}–{result.last_reply_s:.2f} s into the burst"
            )
    logged: Counter[str] = Counter()
    for result in results:
        logged.update(result.restart_log)
    if logged:
        top = ", ".join(f"{event} ×{n}" for event, n in logged.most_common(8))
        lines.append(f"warnings/errors logged after the restarts: {top}")
    return lines
