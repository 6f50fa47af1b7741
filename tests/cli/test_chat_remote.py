"""`eko chat --server URL --key KEY` against a real HTTP server on loopback."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator

import pytest
import uvicorn
from typer.testing import CliRunner

from eko.api.app import create_app
from eko.cli import app
from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.llm.providers import FunctionModel
from eko.store import users as user_repo
from eko.store.db import Database
from eko.wiring import build_services
from tests.conftest import run_isolated

runner = CliRunner()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def server(database_url: str) -> Iterator[tuple[str, str]]:
    """A uvicorn server on its own loop and thread, answering with a scripted model."""
    settings = Settings(database_url=database_url, _env_file=None)
    services = build_services(
        settings, providers=[FunctionModel.constant("Salut, ici Eko.")], embedder=HashEmbedder()
    )

    async def make_user() -> str:
        # Its own engine: pooled asyncpg connections belong to the loop that opened them.
        database = Database(database_url)
        try:
            async with database.session() as session:
                _, key = await user_repo.create_user(session, display_name="Remote", is_pro=True)
                return key
        finally:
            await database.dispose()

    key = run_isolated(make_user())
    port = _free_port()
    config = uvicorn.Config(
        create_app(settings, services=services, migrate=False),
        host="127.0.0.1",
        port=port,
        log_config=None,
        lifespan="off",
    )
    uv = uvicorn.Server(config)

    async def serve_then_close() -> None:
        await uv.serve()
        await services.aclose()  # on the loop that owns the connections

    thread = threading.Thread(target=lambda: asyncio.run(serve_then_close()), daemon=True)
    thread.start()
    while not uv.started:
        thread.join(0.05)
    try:
        yield f"http://127.0.0.1:{port}", key
    finally:
        uv.should_exit = True
        thread.join(10)


def test_remote_chat_round_trip(server: tuple[str, str]) -> None:
    url, key = server
    result = runner.invoke(app, ["chat", "--server", url, "--key", key], input="Bonjour\n/quit\n")
    assert result.exit_code == 0, result.output
    assert "eko> Salut, ici Eko." in result.output


def test_remote_chat_with_a_wrong_key_says_why(server: tuple[str, str]) -> None:
    url, _ = server
    result = runner.invoke(app, ["chat", "--server", url, "--key", "eko_wrong"], input="hi\n")
    assert result.exit_code != 0
    assert "Invalid API key" in result.output
