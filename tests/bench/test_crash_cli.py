"""`eko bench crash`: options reach the run; the exit code says whether the targets were met."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from eko_bench import cli as bench
from eko_bench import cli_support as bench_support
from eko_bench.crash import CrashOptions, ServerFailed


def _fake_suite(
    monkeypatch: pytest.MonkeyPatch, outcome: dict[str, list[str]] | Exception
) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    async def run(**kwargs: Any) -> dict[str, list[str]]:
        calls.append(kwargs)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    module = SimpleNamespace(CrashOptions=CrashOptions, ServerFailed=ServerFailed, run=run)
    monkeypatch.setattr(bench_support, "module", lambda name: module)
    return calls


def test_options_reach_the_run_and_met_targets_exit_0(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_suite(monkeypatch, {"sqlite": []})
    flags = ["--backend", "sqlite", "--rounds", "2", "--messages", "10", "--seed", "7"]
    result = CliRunner().invoke(bench.app, ["crash", *flags, "--settle-s", "5", "--no-kill"])
    assert result.exit_code == 0, result.output
    [call] = calls
    assert call["backends"] == ("sqlite",)
    assert call["options"] == CrashOptions(rounds=2, messages=10, seed=7, settle_s=5.0, kill=False)


def test_a_missed_target_exits_1_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_suite(monkeypatch, {"sqlite": [], "postgres": ["acknowledged_unanswered: 3"]})
    result = CliRunner().invoke(bench.app, ["crash"])
    assert result.exit_code == 1
    assert "acknowledged_unanswered: 3" in result.output


def test_a_server_that_does_not_start_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_suite(monkeypatch, ServerFailed("eko serve exited with code 1"))
    result = CliRunner().invoke(bench.app, ["crash", "--backend", "sqlite"])
    assert result.exit_code == 2
    assert "exited with code 1" in result.output


def test_an_unknown_backend_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_suite(monkeypatch, {})
    result = CliRunner().invoke(bench.app, ["crash", "--backend", "mysql"])
    assert result.exit_code == 1 and not calls
