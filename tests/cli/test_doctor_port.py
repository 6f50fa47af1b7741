"""`eko doctor` asks the running server where it listens, not port 8000 (#37)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eko.cli import app
from eko.cli import serve as serve_cli
from eko.cli.doctor import _server_checks
from eko.cli.server_address import read_recorded, recorded
from eko.config import Settings

runner = CliRunner()


class _Health(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps(
            {"status": "healthy", "model": {"providers": [{"name": "p", "circuit": "open"}]}}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        return None


@pytest.fixture
def health_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


async def test_doctor_asks_the_port_the_server_recorded(health_server: int, tmp_path: Path) -> None:
    # Configured port: the default (8000); the server was started with `--port N`.
    settings = Settings(home=tmp_path, _env_file=None)
    with recorded(tmp_path, "0.0.0.0", health_server):
        checks = await _server_checks(settings)
    assert checks[0].detail == f"http://127.0.0.1:{health_server}/health: healthy"
    assert [(c.name, c.detail) for c in checks[1:]] == [
        ("server provider p", "circuit open, next probe in 0 s")
    ]
    assert read_recorded(tmp_path) is None  # removed when the server stops


async def test_doctor_asks_the_configured_port_without_a_record(
    health_server: int, tmp_path: Path
) -> None:
    settings = Settings(home=tmp_path, port=health_server, _env_file=None)
    checks = await _server_checks(settings)
    assert checks[0].detail == f"http://127.0.0.1:{health_server}/health: healthy"


def test_a_dead_servers_record_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "server.json").write_text(json.dumps({"host": "h", "port": 1, "pid": 2**22 + 7}))
    assert read_recorded(tmp_path) is None


def test_serve_records_its_port_while_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EKO_HOME", str(tmp_path / "home"))
    seen: list[tuple[str, int] | None] = []
    monkeypatch.setattr(serve_cli, "create_app", lambda *_a, **_k: object())
    monkeypatch.setattr(serve_cli, "configure_logging", lambda *_a, **_k: None)
    monkeypatch.setattr(
        serve_cli.uvicorn, "run", lambda *_a, **_k: seen.append(read_recorded(tmp_path / "home"))
    )
    result = runner.invoke(app, ["serve", "--port", "9137", "--no-migrate"])
    assert result.exit_code == 0, result.output
    assert seen == [("127.0.0.1", 9137)]
    assert read_recorded(tmp_path / "home") is None
