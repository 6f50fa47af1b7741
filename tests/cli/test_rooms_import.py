"""`eko rooms import FILE`: a history stored all or nothing, then indexed with a progress bar
(both backends; the hash embedder stands in for the bundled one)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from eko.cli import app
from eko.embed.hashing import HashEmbedder
from eko.memory.turn_index import COLLECTION
from eko.store.models import Embedding, Message, Room, User

runner = CliRunner()
TURNS = 120


async def _invoke(*args: str) -> Any:
    return await asyncio.to_thread(runner.invoke, app, list(args))


def _turns(count: int) -> list[dict[str, Any]]:
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"Turn {i} of an old conversation about boats.",
            "created_at": f"2023-06-{1 + i // 24:02d}T{i % 24:02d}:00:00Z",
            **({"name": "Caroline"} if i % 2 == 0 else {}),
        }
        for i in range(count)
    ]


async def _counts(harness: Any) -> tuple[int, int, int, int]:
    """(rooms, messages, turn vectors, alice's free quota used)."""
    async with harness.services.database.session() as session:
        rooms = await session.scalar(select(func.count()).select_from(Room))
        messages = await session.scalar(select(func.count()).select_from(Message))
        vectors = await session.scalar(
            select(func.count()).select_from(Embedding).where(Embedding.collection == COLLECTION)
        )
        used = await session.scalar(
            select(User.free_quota_used).where(User.display_name == "Alice")
        )
    return int(rooms or 0), int(messages or 0), int(vectors or 0), int(used or 0)


async def test_import_stores_a_history_and_indexes_it_with_progress(
    cli_env: str,
    make_harness: Callable[..., Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("eko.wiring.build_embedder", lambda settings: HashEmbedder())
    async with make_harness() as harness:
        await harness.user("Alice")

        bad = tmp_path / "bad.json"
        wrong = _turns(10)
        wrong[3]["role"] = "system"
        del wrong[7]["content"]
        bad.write_text(json.dumps(wrong), encoding="utf-8")
        refused = await _invoke("rooms", "import", str(bad), "--user", "Alice")
        assert refused.exit_code == 2, refused.output
        assert "message 3: role" in refused.output
        assert "message 7: content" in refused.output
        assert "nothing was stored" in refused.output

        empty_content = tmp_path / "empty.json"
        blank = _turns(5)
        blank[4]["content"] = "  "
        empty_content.write_text(json.dumps(blank), encoding="utf-8")
        refused = await _invoke("rooms", "import", str(empty_content), "--user", "Alice")
        assert refused.exit_code == 2, refused.output
        assert "message 4: content: empty" in refused.output

        garbage = tmp_path / "garbage.json"
        garbage.write_text("{not json", encoding="utf-8")
        refused = await _invoke("rooms", "import", str(garbage), "--user", "Alice")
        assert refused.exit_code == 2, refused.output
        assert "not JSON" in refused.output
        assert await _counts(harness) == (0, 0, 0, 0)

        good = tmp_path / "history.json"
        good.write_text(json.dumps({"messages": _turns(TURNS)}), encoding="utf-8")
        done = await _invoke("rooms", "import", str(good), "--user", "Alice")
        assert done.exit_code == 0, done.output
        assert f"imported {TURNS} messages" in done.output
        assert f"indexed {TURNS} turns" in done.output
        assert "turns per CPU-second" in done.output  # holds on a busy machine too
        assert f"{TURNS}/{TURNS}" in done.output  # the progress bar, finished
        assert await _counts(harness) == (1, TURNS, TURNS, 0)

        async with harness.services.database.session() as session:
            room_id = await session.scalar(select(Room.id))
        assert room_id is not None
        again = await _invoke("rooms", "import", str(good), "--user", "Alice", "--room", room_id)
        assert again.exit_code == 0, again.output
        assert f"imported 0 messages into room {room_id} ({TURNS} already there)" in again.output
        assert await _counts(harness) == (1, TURNS, TURNS, 0)
