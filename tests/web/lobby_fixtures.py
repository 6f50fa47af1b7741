"""What the lobby, status-bar, chain-badge and staff browser tests need beyond
tests/web/conftest.py: their own real server whose scripted model decides reflections and
answers through the chain, pages on that server, and small API helpers.

The model (`lobby_model`):
    a reflection prompt  -> after a short "thinking" pause, {"action": "pass"} when the goal
                            contains "[pass]", else {"action": "message"} asking the goal
    a chain stage        -> OL1 calls search_memories (with the user's words) then reports;
                            M1 drafts; M2 writes the answer; for a question containing
                            NO_REPLY every stage calls a new tool each turn and never answers
                            (the chain falls back to the simple path)
    another JSON request -> "not json" (the chat's deterministic fallbacks route it)
    anything else        -> "Vous avez dit : <the message>"
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser
from sqlalchemy import update

from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.store.db import Database
from eko.store.jobs_models import Job
from eko.store.memory_models import MemoryItem
from eko.store.models import utcnow
from tests.api.live_server import running_eko
from tests.conftest import _migrate, run_isolated
from tests.web.conftest import PageFactory, WebEko
from tests.web.scripted_model import said

# Long enough for the page to show "thinking", short enough for the suite's budget.
THINKING_S = 1.2
CHAIN_ANSWER = "Un chat a besoin de nourriture, d'eau et d'attention."
NO_REPLY = "[sans réponse]"


def lobby_model() -> FunctionModel:
    async def answer(request: ProviderRequest) -> str:
        system = request.messages[0].content
        last = said(request)
        if "## TA CURIOSITÉ" in last:
            goal = last.split("## TA CURIOSITÉ", 1)[1].split("##", 1)[0].strip()
            await asyncio.sleep(THINKING_S)
            if "[pass]" in goal:
                return json.dumps({"action": "pass", "message": "", "reason": "pas le moment"})
            return json.dumps(
                {
                    "action": "message",
                    "message": f"Au fait, {goal}",
                    "reason": "une curiosité",
                    "tone": "playful",
                }
            )
        if system.startswith(("You are OL1", "You are M1", "You are M2")) and any(
            NO_REPLY in message.content for message in request.messages
        ):
            return (
                "[TOOL:search_memories:" + json.dumps({"query": f"q{len(request.messages)}"}) + "]"
            )
        if system.startswith("You are OL1"):
            if last.startswith(("RESULT", "ERROR")):
                return "Facts: nothing remembered."
            return "[TOOL:search_memories:" + json.dumps({"query": last[:200]}) + "]"
        if system.startswith("You are M1"):
            return "Draft: food, water, care."
        if system.startswith("You are M2"):
            return CHAIN_ANSWER
        if request.json_schema is not None:
            return "not json"
        return f"Vous avez dit : {last}"

    return FunctionModel(answer, name="lobby", model="lobby-script")


@dataclass(frozen=True)
class LobbyEko:
    web: WebEko
    database_url: str

    @property
    def url(self) -> str:
        return self.web.url

    def call(self, method: str, path: str, key: str, **kwargs: Any) -> Any:
        response = httpx.request(
            method,
            f"{self.url}{path}",
            headers={"Authorization": f"Bearer {key}"},
            timeout=30,
            **kwargs,
        )
        assert response.status_code < 400, (path, response.status_code, response.text)
        return response.json() if response.content else None

    def public_id(self, key: str) -> str:
        return str(self.call("GET", "/v1/me", key)["public_id"])

    def lobby(self, owner: str, *members: str, name: str = "Lobby") -> str:
        room = self.call("POST", "/v1/rooms", owner, json={"kind": "lobby", "name": name})
        for key in members:
            self.call(
                "POST",
                f"/v1/rooms/{room['id']}/members",
                owner,
                json={"public_id": self.public_id(key)},
            )
        return str(room["id"])

    def say(self, room_id: str, key: str, content: str) -> Any:
        return self.call("POST", f"/v1/rooms/{room_id}/messages", key, json={"content": content})

    def goal(self, room_id: str, key: str, content: str) -> str:
        written = self.call(
            "POST",
            "/v1/memory/items",
            key,
            json={
                "kind": "goal",
                "subject": content[:60],
                "content": content,
                "scope": f"room:{room_id}",
            },
        )
        return str(written["item"]["id"])

    def set_source(self, item_id: str, message_id: str, room_id: str) -> None:
        """Give an item a source turn (what memory extraction records when it learns one)."""

        async def write() -> None:
            database = Database(self.database_url)
            try:
                async with database.session() as session:
                    await session.execute(
                        update(MemoryItem)
                        .where(MemoryItem.id == item_id)
                        .values(source_message_id=message_id, source_room_id=room_id)
                    )
            finally:
                await database.dispose()

        run_isolated(write())

    def failed_job(self, error: str) -> int:
        """A job that failed for good (as a crashed handler leaves it); retrying it succeeds."""

        async def write() -> int:
            database = Database(self.database_url)
            try:
                async with database.session() as session:
                    job = Job(
                        name="maintenance.prune_jobs",
                        args={},
                        status="failed",
                        attempts=3,
                        max_attempts=3,
                        last_error=error,
                        run_at=utcnow() - timedelta(minutes=5),
                        finished_at=utcnow() - timedelta(minutes=4),
                    )
                    session.add(job)
                    await session.flush()
                    return int(job.id)
            finally:
                await database.dispose()

        return run_isolated(write())


@pytest.fixture(scope="package")
def lobby_eko(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> Iterator[LobbyEko]:
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('web-lobby-db') / 'eko.db'}"
    run_isolated(_migrate(url))
    with running_eko(
        url,
        [lobby_model()],
        assistant_name="Eko",
        chain_enabled=True,
        lobby_proactive_enabled=False,
        # The tests trigger reflections one after the other as one member: the per-member
        # limit has its own tests (tests/lobby/test_manual_trigger.py).
        reflection_manual_interval_s=0,
    ) as eko:
        yield LobbyEko(WebEko(eko.url, eko.key, eko.staff_key), url)


@pytest.fixture
def lobby_pages(
    browser: Browser, lobby_eko: LobbyEko, request: pytest.FixtureRequest
) -> Iterator[PageFactory]:
    """new_page's twin on the lobby server: signed-in pages, screenshots, console errors fail."""
    factory = PageFactory(browser, lobby_eko.web)
    yield factory
    factory.finish(request.node.name)
    errors = factory.unexpected_errors()
    if errors:
        pytest.fail("errors in the browser:\n" + "\n".join(errors))
