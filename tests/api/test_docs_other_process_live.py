"""Docs ingested by another process (`eko docs ingest` while `eko serve` runs) are searched by
the server: its docs chunks are searched in memory (EKO_VECTOR_MEMORY_COLLECTIONS), and the
rows another process writes reach it through PostgreSQL's bus or, on SQLite, through the poll
for new rows (at most once per 0.5 s). Real server on a socket, real CLI process, the bundled
embedder on both sides."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from eko.config import Settings
from eko.embed import build_embedder
from eko.llm.providers import FunctionModel
from tests.api.live_server import LiveEko, running_eko

pytestmark = pytest.mark.slow


def _search(eko: LiveEko, question: str) -> list[dict[str, object]]:
    response = httpx.get(
        f"{eko.url}/v1/docs/search",
        params={"q": question, "scope": "handbook"},
        headers=eko.headers,
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return list(response.json())


def _ingest(database_url: str, home: Path, path: Path) -> None:
    """`eko docs ingest` in a process of its own, on the server's database."""
    env = {**os.environ, "EKO_DATABASE_URL": database_url, "EKO_HOME": str(home)}
    eko = str(Path(sys.executable).with_name("eko"))
    done = subprocess.run(
        [eko, "docs", "ingest", str(path), "--scope", "handbook"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 chunk(s) stored" in done.stdout, done.stdout


def test_docs_ingested_by_another_process_are_found(database_url: str, tmp_path: Path) -> None:
    settings = Settings(database_url=database_url, _env_file=None)
    scripted = FunctionModel(lambda request: "ok", name="scripted")
    plans, privacy = tmp_path / "plans.md", tmp_path / "privacy.md"
    plans.write_text("# Plans\n\n## Pro\n\nThe Pro plan costs 12 euros per month.\n", "utf-8")
    privacy.write_text("# Privacy\n\nConversations never leave your own server.\n", "utf-8")
    with running_eko(database_url, [scripted], embedder=build_embedder(settings)) as eko:
        _ingest(database_url, tmp_path, plans)
        # The server searches the scope: its vectors are now held in the server's memory.
        first = _search(eko, "how much is the pro plan per month")
        assert first and "12 euros" in str(first[0]["content"]), first
        assert _search(eko, "the pro plan") != []  # a search that polls, before the write
        _ingest(database_url, tmp_path, privacy)  # another process adds to the same scope
        question = "do my conversations leave the server"
        deadline = time.monotonic() + 10
        found = _search(eko, question)
        while "never leave" not in str(found[:1]) and time.monotonic() < deadline:
            time.sleep(0.2)
            found = _search(eko, question)
        assert found and "never leave" in str(found[0]["content"]), found
