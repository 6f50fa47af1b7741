"""The knobs of `eko bench crash` (eko_bench/cli.py maps its options onto these)."""

from __future__ import annotations

from dataclasses import dataclass

BACKENDS = ("sqlite", "postgres")
# The default kill window's end, per message of the burst.
SECONDS_PER_MESSAGE = 0.2


@dataclass(frozen=True)
class CrashOptions:
    rounds: int = 20
    messages: int = 50
    # Users posting, each in their own direct room (messages go round-robin).
    users: int = 5
    seed: int = 0
    # False: the control run, the same bursts with nothing killed (must show no loss).
    kill: bool = True
    # Each kill fires at a moment drawn uniformly in [kill_from_s, kill_until_s], seconds
    # after the burst starts. kill_until_s defaults to 0.2 s per message (at least 1 s): on 2
    # cores, 30 messages are answered 2–4 s into the burst and their after-reply jobs run for
    # ~8 s more, so kills land before the answers, among them, and among the jobs.
    kill_from_s: float = 0.3
    kill_until_s: float | None = None
    # The stub model's delay per call, drawn uniformly in this range.
    model_min_delay_s: float = 0.05
    model_max_delay_s: float = 0.3
    # After the restart: the longest wait for the queue to drain and the counts to settle,
    # and how long they must stay unchanged (with no job pending) to count as settled.
    settle_s: float = 60.0
    quiet_s: float = 3.0
    # One post's bound (a post whose server was killed ends at once, with no status).
    request_timeout_s: float = 60.0
    start_timeout_s: float = 120.0

    @property
    def kill_window(self) -> tuple[float, float]:
        until = self.kill_until_s
        if until is None:
            until = max(1.0, SECONDS_PER_MESSAGE * self.messages)
        return self.kill_from_s, max(self.kill_from_s, until)
