"""The guard benchmark's pure parts: the held-out split, the metrics, the operating point
choice, the data files (French pairs, known-wrong list)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from eko.guard.check import BASE_RULES
from eko.guard.decide import Candidate
from eko_bench.guard.metrics import Config, figures, lowest_threshold, measured, served
from eko_bench.guard.pairs import (
    FR_PAIRS,
    KNOWN_WRONG,
    Pair,
    load_known_wrong,
    load_pairs,
    pair_key,
    split_of,
)
from eko_bench.guard.quality import Asked

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _asked(stored: str, asked: str, label: int, score: float, lang: str = "en") -> Asked:
    pair = Pair(stored, asked, label, lang, split_of(stored, asked))
    return Asked(pair, lang, None, [Candidate(stored, stored, score, NOW)])


def test_split_is_stable_held_out_and_about_thirty_percent() -> None:
    assert split_of("How do I learn Python?", "How to learn Python?") == split_of(
        "how do i learn python", "How to learn Python ?"
    )
    splits = [split_of(f"question {i}", f"other {i}") for i in range(2000)]
    assert 0.25 < splits.count("test") / len(splits) < 0.35


def test_figures_count_precision_recall_raw_and_known_wrong() -> None:
    same = _asked("How do I learn Python?", "What is the best way to learn Python?", 1, 0.98)
    noisy = _asked("How can I lose weight quickly?", "How do I lose weight faster?", 0, 0.98)
    wrong = _asked(
        "What are the best Skrillex songs?", "What are the best Skrillex remixes?", 0, 0.98
    )
    low = _asked("How do I cook rice?", "How long to boil rice?", 1, 0.90)
    known = frozenset(
        {pair_key("What are the best Skrillex remixes?", "What are the best Skrillex songs?")}
    )
    # The check's older rules only: the counting is under test, not the alignment.
    base = Config("t", {"und": 0.95}, rules=BASE_RULES)
    result = figures([same, noisy, wrong, low], base, known_wrong=known)
    assert (result.asked, result.served, result.right) == (4, 3, 1)
    assert result.precision == 1 / 3 and result.recall == 0.5
    assert result.false_hit_rate == 1.0  # both label-0 questions were served
    assert result.known_wrong == 1 and result.known_wrong_rate == 1 / 3
    # Clean labels (the French set): every wrong serve is known-wrong.
    clean = figures([same, noisy, wrong], base, known_wrong=frozenset(), clean_labels=True)
    assert clean.known_wrong == 2


def test_replay_applies_rules_languages_and_judge_verdicts() -> None:
    deictic = _asked("What does this word mean?", "What does this mean?", 1, 0.99)
    assert served(deictic, Config("t", {"und": 0.9})) is None
    assert served(deictic, Config("t", {"und": 0.9}, rules=BASE_RULES)) is not None
    french = _asked(
        "Comment changer mon mot de passe ?", "Comment modifier mon mot de passe ?", 1, 0.93, "fr"
    )
    assert served(french, Config("t", {"und": 0.97, "fr": 0.92})) is not None
    assert served(french, Config("t", {"und": 0.97})) is None
    grey = _asked("How do I learn Python?", "How can I learn Python quickly?", 1, 0.96)
    band = {"und": 0.95}
    assert served(grey, Config("t", {"und": 0.97}, judge_floors=band)) is None
    verdicts = {(grey.question, grey.candidates[0].item): True}
    assert served(grey, Config("t", {"und": 0.97}, judge_floors=band, verdicts=verdicts))


def test_identical_and_stored_texts_are_excluded() -> None:
    identical = _asked("How do I learn Python?", "how do I learn python ?", 0, 1.0)
    stored = Asked(identical.pair.__class__("a?", "b?", 1, None, "dev"), "en", "b?", [])
    kept = _asked("How do I learn Python?", "How to learn Python?", 1, 0.99)
    assert measured([identical, stored, kept]) == [kept]


def test_lowest_threshold_needs_every_higher_one_within_the_bound() -> None:
    rates = {0.95: 0.0, 0.96: 0.01, 0.97: 0.0, 0.98: 0.0}

    def evaluate(t: float) -> object:
        return type("F", (), {"known_wrong_rate": rates[t]})()

    assert lowest_threshold(list(rates), evaluate, max_known_wrong_rate=0.0) == 0.97  # type: ignore[arg-type]
    assert lowest_threshold(list(rates), evaluate, max_known_wrong_rate=0.01) == 0.95  # type: ignore[arg-type]


def test_french_set_is_half_paraphrases_half_look_alikes() -> None:
    pairs = load_pairs(FR_PAIRS)
    assert len(pairs) >= 40 and {p.lang for p in pairs} == {"fr"}
    assert sum(p.label for p in pairs) == len(pairs) // 2
    assert {p.split for p in pairs} == {"dev", "test"}
    kinds = {json.loads(line)["kind"] for line in FR_PAIRS.read_text(encoding="utf-8").splitlines()}
    assert {"negation", "number", "name", "deictic", "order"} <= kinds


def test_known_wrong_list_is_readable_and_order_free() -> None:
    rows = [json.loads(line) for line in KNOWN_WRONG.read_text(encoding="utf-8").splitlines()]
    known = load_known_wrong()
    assert len(known) == len({pair_key(r["question"], r["served"]) for r in rows}) > 20
    first = rows[0]
    assert pair_key(first["served"], first["question"]) in known


async def test_quality_run_end_to_end_with_the_hash_embedder(tmp_path: Path) -> None:
    """Learn, look up through GuardService, replay, print: the whole quality path, small."""
    from rich.console import Console

    from eko.config import Settings
    from eko.embed.hashing import HashEmbedder
    from eko.guard.modes import build_policy
    from eko_bench.guard.pairs import CachedEmbedder
    from eko_bench.guard.quality import look_up_all
    from eko_bench.guard.report import run_report
    from eko_bench.guard.tables import grid_table, modes_table

    settings = Settings(_env_file=None)
    data = [
        Pair("How do I learn Python fast?", "How can I learn Python quickly?", 1, None, "dev"),
        Pair("Who is Sonia Gandhi?", "Where is Sonia Gandhi?", 0, None, "test"),
        Pair("What does this mean?", "What does this mean?", 1, None, "test"),
    ]
    cache = tmp_path / "cache.npz"
    embedder = CachedEmbedder(HashEmbedder(), cache)
    asked, timings = await look_up_all(
        settings, embedder, {"data": data, "fr": load_pairs(FR_PAIRS)}
    )
    assert (
        cache.is_file()
        and CachedEmbedder(HashEmbedder(), cache).cache.keys() == embedder.cache.keys()
    )
    assert timings["embedded"] > 0 and len(asked["data"]) == 3
    assert all(a.candidates for a in asked["data"][:2])  # every candidate came back
    policies = {
        m: build_policy(m, embedder="hash", calibrated_threshold=0.9)
        for m in ("strict", "balanced", "judge")
    }
    report = run_report(asked, load_known_wrong(), policies)  # type: ignore[arg-type]
    assert report.sets["data"]["identical"] == 1 and report.sets["data"]["test"] == 1
    assert {"data.balanced", "data.strict", "fr.balanced", "fr.strict"} <= report.chosen.keys()
    console = Console(record=True, width=300)
    console.print(grid_table(report, "data", ("dev", "test")), modes_table(report, ("test",)))
    assert "always serve the nearest" in console.export_text()
