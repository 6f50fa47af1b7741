"""Small statistics the benchmarks share."""

from __future__ import annotations

from collections.abc import Sequence


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank value at `fraction` (0.5: median, 0.95: p95) of non-empty `values`."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]
