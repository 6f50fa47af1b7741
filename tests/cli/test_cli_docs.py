"""`eko docs ingest|scopes|search|remove` with the bundled embedder (real stack)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eko.cli import app

runner = CliRunner()
pytestmark = pytest.mark.slow


@pytest.fixture
def eko_env(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EKO_DATABASE_URL", database_url)
    return database_url


def test_ingest_a_directory_then_search_and_remove(eko_env: str, tmp_path: Path) -> None:
    docs = tmp_path / "handbook"
    (docs / "billing").mkdir(parents=True)
    (docs / "billing" / "plans.md").write_text(
        "# Plans\n\n## Pro\n\nThe Pro plan costs 12 euros per month.\n", encoding="utf-8"
    )
    (docs / "privacy.txt").write_text("Conversations never leave your server.", encoding="utf-8")
    (docs / "script.py").write_text("print('not a doc')", encoding="utf-8")

    first = runner.invoke(
        app,
        ["docs", "ingest", str(docs), "--scope", "handbook", "--description", "the user handbook"],
    )
    assert first.exit_code == 0, first.output
    assert "2 file(s), 2 chunk(s) stored" in first.output

    (docs / "privacy.txt").write_text("Conversations stay on your server. Always.", "utf-8")
    again = runner.invoke(app, ["docs", "ingest", str(docs / "privacy.txt"), "--scope", "handbook"])
    assert again.exit_code == 0, again.output
    assert "1 old chunk(s) replaced" in again.output

    scopes = runner.invoke(app, ["docs", "scopes"])
    assert scopes.exit_code == 0 and "handbook" in scopes.output
    assert "the user handbook" in scopes.output

    found = runner.invoke(
        app,
        [
            "docs",
            "search",
            "how much is the pro plan per month",
            "--scope",
            "handbook",
            "--limit",
            "1",
        ],
    )
    assert found.exit_code == 0, found.output
    # The table wraps long cells: compare without whitespace and box drawing.
    flat = re.sub(r"[\s│┃]+", "", found.output)
    assert "billing/plans.md" in flat and "12eurospermonth" in flat

    bad = runner.invoke(app, ["docs", "ingest", str(docs), "--scope", "Not A Scope"])
    assert bad.exit_code != 0 and "scope" in bad.output

    removed = runner.invoke(app, ["docs", "remove", "handbook"])
    assert removed.exit_code == 0, removed.output
    assert "handbook" not in runner.invoke(app, ["docs", "scopes"]).output
    assert runner.invoke(app, ["docs", "remove", "handbook"]).exit_code != 0
