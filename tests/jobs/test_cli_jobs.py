"""`eko jobs`, and what `eko serve --workers` refuses, run in-process with typer's runner."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from eko.cli import app
from eko.cli.model import provider_line
from eko.config import Settings
from eko.jobs.build import build_job_queue
from eko.jobs.registry import JobDefinition, JobRegistry
from eko.store.db import Database
from tests.conftest import run_isolated
from tests.jobs.conftest import empty_procrastinate

runner = CliRunner()


@pytest.fixture
def eko_env(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EKO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("EKO_DATABASE_URL", database_url)
    return database_url


async def _seed(url: str) -> tuple[int, int]:
    """One job queued for later, one failed, through the configured backend."""
    database = Database(url)

    async def boom(_args: dict[str, object]) -> None:
        raise RuntimeError("boom")

    registry = JobRegistry()
    registry.register(JobDefinition("test.boom", boom, max_attempts=1))
    queue = build_job_queue(Settings(database_url=url, _env_file=None), database, registry)
    try:
        await empty_procrastinate(database)
        later = await queue.enqueue("test.boom", {"room_id": "r1"}, delay_s=3600)
        failed = await queue.enqueue("test.boom", {"room_id": "r2"})
        await queue.drain()
        assert later is not None and failed is not None
        return later, failed
    finally:
        await queue.aclose()
        await database.dispose()


def test_jobs_list_cancel_and_retry(eko_env: str) -> None:
    later, failed = run_isolated(_seed(eko_env))
    listed = runner.invoke(app, ["jobs", "list"])
    assert listed.exit_code == 0, listed.output
    assert "1 queued" in listed.output and "1 failed" in listed.output
    only_failed = runner.invoke(app, ["jobs", "list", "--status", "failed"])
    assert "r2" in only_failed.output and "r1" not in only_failed.output

    assert runner.invoke(app, ["jobs", "cancel", str(later)]).exit_code == 0
    refused = runner.invoke(app, ["jobs", "cancel", str(later)])
    assert refused.exit_code != 0 and "cancelled" in refused.output
    retried = runner.invoke(app, ["jobs", "retry", str(failed)])
    assert retried.exit_code == 0 and "queued again" in retried.output
    missing = runner.invoke(app, ["jobs", "retry", "999999"])
    assert missing.exit_code != 0 and "no job" in missing.output
    bad = runner.invoke(app, ["jobs", "list", "--status", "stuck"])
    assert bad.exit_code != 0


def test_serve_refuses_several_workers_on_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EKO_HOME", str(tmp_path / "home"))
    result = runner.invoke(app, ["serve", "--workers", "2"])
    assert result.exit_code != 0
    assert "needs PostgreSQL" in result.output


def test_serve_refuses_several_workers_with_the_in_process_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EKO_DATABASE_URL", "postgresql+asyncpg://eko@127.0.0.1:9/eko")
    result = runner.invoke(app, ["serve", "--workers", "2"])
    assert result.exit_code != 0
    assert "eko model serve" in result.output


def test_model_serve_prints_a_provider_line_eko_accepts(monkeypatch: pytest.MonkeyPatch) -> None:
    line = provider_line("127.0.0.1", 8081)
    name, _, value = line.partition("=")
    assert name == "EKO_LLM_PROVIDERS"
    monkeypatch.setenv(name, value.strip("'"))  # as the shell would pass it
    settings = Settings(_env_file=None)
    provider = settings.llm_providers[0]
    assert (provider.kind, provider.base_url) == ("openai", "http://127.0.0.1:8081/v1")
