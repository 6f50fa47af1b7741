"""`eko bench guard` counts wrong serves on any labelled file (issue 36): served pairs labelled
not-duplicate, served pairs answered by another stored question, both written to a file for
reading; junk questions the guard refuses are skipped and counted, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.guard.modes import build_policy
from eko_bench import guard as guard_bench
from eko_bench.guard.pairs import CachedEmbedder, load_known_wrong, load_pairs
from eko_bench.guard.quality import look_up_all
from eko_bench.guard.report import QualityReport, Row, run_report

ROWS = [
    # Not a duplicate by the data; the only near stored question is its own: served by
    # "always serve the nearest", and in no hand list.
    {
        "text_a": "Who is the president of France?",
        "text_b": "Who is the president of Peru?",
        "label": 0,
    },
    # Not a duplicate by the data, near enough for the shipped modes (hash embedder, 0.9).
    {
        "text_a": "What is the best way to learn the Python language?",
        "text_b": "What is the best way to learn the Python language quickly?",
        "label": 0,
    },
    # A duplicate by the data whose nearest stored question is another pair's.
    {
        "text_a": "How do I bake bread at home?",
        "text_b": "What is the capital city of Italy?",
        "label": 1,
    },
    {
        "text_a": "What is the capital of Italy?",
        "text_b": "Capital of Italy, what is it?",
        "label": 1,
    },
    # Junk the guard refuses, stored or asked.
    {"text_a": "Ok", "text_b": "A", "label": 0},
    {"text_a": "How long do I boil an egg?", "text_b": "Ok", "label": 1},
    {"text_a": "?", "text_b": "How long to boil eggs?", "label": 0},
]


def _data(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


async def _report(tmp_path: Path) -> QualityReport:
    embedder = CachedEmbedder(HashEmbedder())
    asked, _ = await look_up_all(
        Settings(_env_file=None), embedder, {"data": load_pairs(_data(tmp_path))}
    )
    policies = {
        m: build_policy(m, embedder="hash", calibrated_threshold=0.9)
        for m in ("strict", "balanced", "judge")
    }
    return run_report(asked, load_known_wrong(), policies)  # type: ignore[arg-type]


def _both_splits(row: Row, attribute: str) -> int:
    return sum(getattr(figures, attribute) for figures in row.by_split.values())


async def test_always_serve_counts_not_duplicate_and_other_question_serves(
    tmp_path: Path,
) -> None:
    report = await _report(tmp_path)
    [always] = [r for r in report.baselines if r.config.label == "always serve the nearest"]
    [exact] = [r for r in report.baselines if r.config.label == "exact text only"]
    assert _both_splits(always, "served") == 4
    # The hand list knows none of these pairs: its column says 0, the data's labels do not.
    assert _both_splits(always, "known_wrong") == 0
    assert _both_splits(always, "not_duplicate") == 2
    assert _both_splits(always, "other_stored") == 1
    wrong = [w for f in always.by_split.values() for w in f.wrong]
    assert {(w.asked.question, w.served, w.not_duplicate, w.other_stored) for w in wrong} == {
        ("Who is the president of Peru?", "Who is the president of France?", True, False),
        (ROWS[1]["text_b"], ROWS[1]["text_a"], True, False),
        ("What is the capital city of Italy?", "What is the capital of Italy?", False, True),
    }
    assert _both_splits(exact, "served") == 0


async def test_junk_questions_are_skipped_and_counted(tmp_path: Path) -> None:
    report = await _report(tmp_path)
    assert report.sets["data"]["refused"] == 3
    assert report.refusals["data"] == {"stored:not_a_question": 2, "asked:not_a_question": 1}
    assert report.sets["data"]["dev"] + report.sets["data"]["test"] == 4


async def test_run_prints_the_honest_columns_and_writes_the_wrong_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(guard_bench, "build_embedder", lambda settings: HashEmbedder())
    console = Console(record=True, width=400)
    out = tmp_path / "out" / "wrong.jsonl"
    await guard_bench.run(
        settings=Settings(home=tmp_path / "home", _env_file=None),
        console=console,
        data=_data(tmp_path),
        lookup=False,
        backends=["sqlite"],
        wrong_out=out,
    )
    text = console.export_text()
    assert "served not-duplicate" in text and "served another question" in text
    assert "3 refused by the guard" in text
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    served = {(r["set"], r["question"], r["served"]) for r in rows if r["rule"] == "mode balanced"}
    assert ("data", ROWS[1]["text_b"], ROWS[1]["text_a"]) in served
    assert all(r["not_duplicate"] or r["other_stored"] for r in rows)


def test_replay_never_serves_an_entry_in_another_language() -> None:
    from datetime import UTC, datetime

    from eko.guard.decide import Candidate
    from eko_bench.guard.metrics import Config, served
    from eko_bench.guard.pairs import Pair
    from eko_bench.guard.quality import Asked

    stored = "How do I reset the Docker cache on Ubuntu?"
    question = "Comment vider le cache Docker sur Ubuntu ?"
    now = datetime(2026, 1, 1, tzinfo=UTC)
    asked = Asked(
        Pair(stored, question, 1, "fr", "dev"), "fr", None, [Candidate(stored, stored, 0.97, now)]
    )
    assert served(asked, Config("mode", {"und": 0.95})) is None
    assert served(asked, Config("before", {"und": 0.95}, same_language=False)) == stored


def test_wrong_out_option_reaches_the_quality_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typing import Any

    from typer.testing import CliRunner

    from eko_bench import cli as bench
    from eko_bench import cli_support as bench_support

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(bench_support, "run_suite", lambda name, **options: calls.append(options))
    out = tmp_path / "wrong.jsonl"
    result = CliRunner().invoke(
        bench.app,
        ["guard", "--quality-only", "--data", str(_data(tmp_path)), "--wrong-out", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert calls[0]["wrong_out"] == out


def test_api_option_runs_only_the_api_latency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typing import Any

    from typer.testing import CliRunner

    from eko_bench import cli as bench
    from eko_bench import cli_support as bench_support

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(bench_support, "run_suite", lambda name, **options: calls.append(options))
    data = str(_data(tmp_path))
    arguments = ["guard", "--api", "--api-hits", "7", "--api-entries", "900", "--data", data]
    result = CliRunner().invoke(bench.app, [*arguments, "--backend", "sqlite"])
    assert result.exit_code == 0, result.output
    assert calls[0]["api"] is True and calls[0]["api_hits"] == 7
    assert calls[0]["api_entries"] == 900
    assert calls[0]["backends"] == ["sqlite"]
    refused = CliRunner().invoke(bench.app, ["guard", "--api", "--lookup", "--data", data])
    assert refused.exit_code != 0 and len(calls) == 1
    no_entries = CliRunner().invoke(
        bench.app, ["guard", "--api", "--api-entries", "0", "--data", data]
    )
    assert no_entries.exit_code != 0 and "--api-entries" in no_entries.output
    assert len(calls) == 1
