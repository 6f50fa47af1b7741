"""`eko bench guard --backend`: one option for the quality and the latency parts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eko_bench import cli as bench
from eko_bench import cli_support as bench_support


@pytest.fixture
def suite_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(
        bench_support, "run_suite", lambda name, **options: calls.append((name, options))
    )
    return calls


@pytest.mark.parametrize(
    ("flags", "backends"),
    [
        (["--backend", "both"], ["sqlite", "postgres"]),
        (["--backend", "postgres"], ["postgres"]),
        (["--backend", "sqlite", "--backend", "sqlite"], ["sqlite"]),
    ],
)
def test_backend_option_reaches_the_quality_run(
    suite_calls: list[tuple[str, dict[str, Any]]],
    tmp_path: Path,
    flags: list[str],
    backends: list[str],
) -> None:
    data = tmp_path / "pairs.jsonl"
    data.write_text('{"text_a": "a?", "text_b": "b?", "label": 1}\n', encoding="utf-8")
    result = CliRunner().invoke(bench.app, ["guard", "--quality-only", "--data", str(data), *flags])
    assert result.exit_code == 0, result.output
    [(name, options)] = suite_calls
    assert name == "eko_bench.guard" and options["backends"] == backends
    assert options["data"] == data and options["lookup"] is False


def test_unknown_backend_fails(suite_calls: list[tuple[str, dict[str, Any]]]) -> None:
    result = CliRunner().invoke(bench.app, ["guard", "--lookup", "--backend", "mysql"])
    assert result.exit_code != 0 and not suite_calls
