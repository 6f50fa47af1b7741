"""`eko memory …`, `eko summaries …`, `eko topics list` run in-process with typer's runner.

The commands build their services with the configured models; the tests swap in a scripted
summarizer and the hash embedder (the seam: eko.wiring.build_services, looked up at run time).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eko.cli import app
from eko.cli.common import console
from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.llm.providers import FunctionModel
from eko.memory.items import NewItem
from eko.memory.scopes import GLOBAL
from eko.store import messages as message_repo
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.wiring import Services, build_services
from tests.conftest import run_isolated

from .conftest import Summarizer

runner = CliRunner()


@pytest.fixture
def cli_env(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EKO_DATABASE_URL", database_url)
    monkeypatch.setenv("EKO_SUMMARIZE_EVERY_N_CHARS", "300")

    def scripted(settings: Settings, **_: Any) -> Services:
        topics = lambda n, r: ["Jardin"] if n % 2 else ["Potager"]  # noqa: E731
        model = FunctionModel(Summarizer(topics=topics))
        return build_services(settings, providers=[model], embedder=HashEmbedder())

    monkeypatch.setattr("eko.wiring.build_services", scripted)
    monkeypatch.setattr(console, "width", 240)  # whole table cells, no wrapping
    return database_url


async def _seed(url: str) -> str:
    database = Database(url)
    services = build_services(
        Settings(database_url=url, _env_file=None),
        providers=[FunctionModel.constant("{}")],
        embedder=HashEmbedder(),
        database=database,
    )
    try:
        async with database.session() as session:
            user, _ = await user_repo.create_user(session, display_name="alice")
            room = await room_repo.create_room(
                session, kind="direct", name="r", persona="eko", created_by=user.id
            )
        for i in range(20):
            await message_repo.append_message(
                database,
                room_id=room.id,
                role="user" if i % 2 == 0 else "assistant",
                content=f"message {i} ".ljust(100, "x"),
                dedupe_key=f"cli:{i}",
                sender_id=user.id if i % 2 == 0 else None,
            )
        await services.memory.items.remember(
            NewItem("goal", "Corentin", "Qui est Corentin ?"), scope=GLOBAL
        )
        await services.memory.items.remember(
            NewItem("fact", "Kraken", "Kraken FM est une radio associative"), scope=GLOBAL
        )
        return room.id
    finally:
        await services.aclose()


def test_memory_list_search_and_delete(cli_env: str) -> None:
    run_isolated(_seed(cli_env))

    listed = runner.invoke(app, ["memory", "list", "--kind", "goal"])
    found = runner.invoke(app, ["memory", "search", "radio associative Kraken"])
    bad = runner.invoke(app, ["memory", "list", "--kind", "opinion"])

    assert listed.exit_code == 0, listed.output
    assert "Qui est Corentin" in listed.output and "Kraken" not in listed.output
    assert found.exit_code == 0 and "Kraken FM" in found.output
    assert bad.exit_code != 0 and "fact, self, goal" in bad.output
    item_id = next(
        line.split("│")[1].strip() for line in listed.output.splitlines() if "Corentin" in line
    )
    deleted = runner.invoke(app, ["memory", "delete", item_id, "--yes"])
    assert deleted.exit_code == 0, deleted.output
    assert "Corentin" not in runner.invoke(app, ["memory", "list"]).output
    assert runner.invoke(app, ["memory", "delete", item_id, "--yes"]).exit_code != 0


def test_summaries_build_list_search_and_topics(cli_env: str) -> None:
    room_id = run_isolated(_seed(cli_env))

    built = runner.invoke(app, ["summaries", "build", room_id])
    listed = runner.invoke(app, ["summaries", "list", room_id, "--level", "2"])
    searched = runner.invoke(app, ["summaries", "search", room_id, "conv", "--topic", "jardin"])
    topics = runner.invoke(app, ["topics", "list", room_id])
    topic_search = runner.invoke(app, ["topics", "search", room_id, "Potager"])
    again = runner.invoke(app, ["summaries", "build", room_id])
    missing = runner.invoke(app, ["summaries", "build", "nope"])

    assert built.exit_code == 0, built.output
    # 2,000 characters at 300 per L1: 6 L1, then 2 L2 over them.
    assert "8 new summaries (L1: 6, L2: 2)" in built.output and "8 model calls" in built.output
    assert listed.exit_code == 0 and "0-900" in listed.output and "900-1800" in listed.output
    assert searched.exit_code == 0 and "Jardin" in searched.output
    assert topics.exit_code == 0 and "Jardin" in topics.output and "Potager" in topics.output
    assert topic_search.exit_code == 0 and "Potager" in topic_search.output
    assert "0 new summaries" in again.output
    assert missing.exit_code != 0 and "no room" in missing.output


def test_memory_reindex_embeds_every_turn_of_the_named_or_all_rooms(cli_env: str) -> None:
    room_id = run_isolated(_seed(cli_env))

    one = runner.invoke(app, ["memory", "reindex", room_id])
    every = runner.invoke(app, ["memory", "reindex", "--all"])
    nothing = runner.invoke(app, ["memory", "reindex"])
    unknown = runner.invoke(app, ["memory", "reindex", "no-such-room"])

    assert one.exit_code == 0, one.output
    assert "20 messages indexed in 1 room(s)" in one.output
    assert every.exit_code == 0 and "20 messages indexed in 1 room(s)" in every.output
    assert nothing.exit_code != 0 and "--all" in nothing.output
    assert unknown.exit_code != 0 and "no room 'no-such-room'" in unknown.output


def test_memory_sources_quotes_the_turn_an_item_was_learned_from(cli_env: str) -> None:
    room_id = run_isolated(_seed(cli_env))

    async def learned() -> tuple[str, str]:
        database = Database(cli_env)
        services = build_services(
            Settings(database_url=cli_env, _env_file=None),
            providers=[FunctionModel.constant("{}")],
            embedder=HashEmbedder(),
            database=database,
        )
        try:
            async with database.session() as session:
                room = await room_repo.get_room(session, room_id=room_id)
                assert room is not None
            message, _ = await message_repo.append_message(
                database,
                room_id=room.id,
                role="user",
                content="Je joue du violoncelle depuis dix ans.",
                dedupe_key="cli:cello",
                sender_id=room.created_by,
            )
            written = await services.memory.items.remember(
                NewItem(
                    "fact",
                    "alice",
                    "joue du violoncelle",
                    source_message_id=message.id,
                    source_room_id=room.id,
                ),
                scope=GLOBAL,
            )
            bare = await services.memory.items.remember(
                NewItem("fact", "Paris", "capitale de la France"), scope=GLOBAL
            )
            return written.item.id, bare.item.id
        finally:
            await services.aclose()

    with_source, without = run_isolated(learned())
    shown = runner.invoke(app, ["memory", "sources", with_source])
    bare = runner.invoke(app, ["memory", "sources", without])
    missing = runner.invoke(app, ["memory", "sources", "nope"])

    assert shown.exit_code == 0, shown.output
    assert "joue du violoncelle" in shown.output
    assert "Je joue du violoncelle depuis dix ans." in shown.output
    assert bare.exit_code == 0 and "no source turn" in bare.output
    assert missing.exit_code != 0 and "no memory item 'nope'" in missing.output
