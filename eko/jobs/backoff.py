"""How long a job waits before its next try: exponential, capped."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Backoff:
    base_s: float = 5.0
    cap_s: float = 600.0

    def delay_s(self, attempt: int) -> float:
        """The wait after the `attempt`-th try (1 = the first): base, 2×base, 4×base, … ≤ cap."""
        exponent = min(max(attempt, 1) - 1, 30)  # 2**30 × base is past any cap
        return float(min(self.cap_s, self.base_s * (2**exponent)))
