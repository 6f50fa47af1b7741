"""The guard benchmark's quality part on both backends: the same candidates on each, and the
comparison that says so (or names the questions that differ)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.guard.decide import Candidate
from eko_bench.guard.backends import agreement_line, compare
from eko_bench.guard.pairs import CachedEmbedder, Pair
from eko_bench.guard.quality import Asked, look_up_all

NOW = datetime(2026, 1, 1, tzinfo=UTC)
PAIRS = [
    Pair("How do I learn Python fast?", "How can I learn Python quickly?", 1, None, "dev"),
    Pair("Who is Sonia Gandhi?", "Where is Sonia Gandhi?", 0, None, "test"),
    Pair("How do I cook rice?", "How long do I boil rice?", 1, None, "dev"),
]


def _asked(candidates: list[tuple[str, float]]) -> Asked:
    pair = Pair("a?", "b?", 1, None, "dev")
    return Asked(pair, "en", None, [Candidate(q, q, s, NOW) for q, s in candidates])


def test_compare_names_questions_whose_candidates_differ() -> None:
    one = {"data": [_asked([("x?", 0.9), ("y?", 0.8)]), _asked([("z?", 0.7)])]}
    same = {"data": [_asked([("y?", 0.8), ("x?", 0.9 + 1e-7)]), _asked([("z?", 0.7)])]}
    assert compare(one, same).agree
    other = {"data": [one["data"][0], _asked([("w?", 0.5)])]}
    result = compare(one, other)
    assert not result.agree and result.different_candidates == 1 and result.examples == ["b?"]
    assert "DIFFERENT" in agreement_line("postgres", "sqlite", result)
    gap = {"data": [_asked([("x?", 0.95), ("y?", 0.8)]), _asked([("z?", 0.7)])]}
    assert not compare(one, gap).agree and compare(one, gap).max_score_gap == pytest.approx(0.05)
    # The k-th place decided by float noise: a tie, not a difference.
    tie = {"data": [_asked([("x?", 0.9), ("v?", 0.8 + 1e-7)]), _asked([("z?", 0.7)])]}
    tied = compare(one, tie)
    assert tied.agree and tied.ties == 1
    assert "0 of 2 asked questions differ" in agreement_line("postgres", "sqlite", tied)
    exact = {"data": [replace(one["data"][0], exact="x?"), one["data"][1]]}
    assert compare(one, exact).different_candidates == 1


async def test_quality_lookups_agree_on_sqlite_and_postgres(
    pg_database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The throwaway database is made inside the test server (eko_bench.databases).
    monkeypatch.setenv("EKO_BENCH_DATABASE_URL", pg_database_url)
    settings = Settings(_env_file=None)
    embedder = CachedEmbedder(HashEmbedder(), tmp_path / "cache.npz")
    sets = {"data": PAIRS}
    on_sqlite, _ = await look_up_all(settings, embedder, sets, "sqlite")
    on_postgres, _ = await look_up_all(settings, embedder, sets, "postgres")
    assert [a.question for a in on_postgres["data"]] == [p.text_b for p in PAIRS]
    assert all(a.candidates for a in on_postgres["data"])
    assert compare(on_sqlite, on_postgres).agree
