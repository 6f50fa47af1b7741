"""The verifier asked about a pair in both directions, for the families tests: a trap must be
refused whichever side is the stored question, a paraphrase passed whichever side it is."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from eko.guard.check import false_hit_check


def served_either_way(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each (asked, stored) direction of `pairs` that the false-hit check passes."""
    return [
        (a, b)
        for question, stored in pairs
        for a, b in ((question, stored), (stored, question))
        if false_hit_check(a, b).passed
    ]


def refused_either_way(question: str, stored: str) -> list[dict[str, Any]]:
    """What the check refused, for each direction of the pair it refuses (empty: passed)."""
    results = (false_hit_check(a, b) for a, b in ((question, stored), (stored, question)))
    return [result.details for result in results if not result.passed]
