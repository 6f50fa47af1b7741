"""A lobby on the current backend with a scripted model, the hash embedder, a fake clock and a
recording event bus: what the reflection tests drive."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.events.fanout import Fanout, Subscription
from eko.events.types import Event
from eko.llm.providers import FunctionModel
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ProviderRequest
from eko.lobby.live import LivePhases
from eko.lobby.reflection import Reflector
from eko.lobby.service import Lobby, build_lobby
from eko.memory.items import MemoryItems, NewItem
from eko.memory.scopes import room_key
from eko.prompts.library import PromptLibrary
from eko.store import messages as message_repo
from eko.store.db import Database
from eko.store.llm_calls import DatabaseCallRecorder
from eko.store.models import Message, Room, User
from eko.store.vectors import build_vector_index
from tests.lobby.helpers import make_lobby


class Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


@dataclass
class RecordingBus:
    """An event bus that keeps every published event (its subscribers get them too)."""

    events: list[Event] = field(default_factory=list)
    _fanout: Fanout = field(default_factory=Fanout, repr=False)

    @property
    def backend(self) -> str:
        return "test"

    async def publish(self, event: Event) -> None:
        self.events.append(event)
        self._fanout.deliver(event)

    async def subscribe(self, *, max_queue: int) -> Subscription:
        return self._fanout.add(max_queue)

    async def aclose(self) -> None:
        return None

    def types(self, prefix: str = "") -> list[str]:
        return [e.type for e in self.events if e.type.startswith(prefix)]


class ScriptedReflection:
    """Answers reflection prompts with a question about the goal (or a pass)."""

    def __init__(self, *, action: str = "message", tone: str | None = "playful") -> None:
        self.action = action
        self.tone = tone
        self.calls = 0
        self.prompts: list[str] = []

    def __call__(self, request: ProviderRequest) -> str:
        self.calls += 1
        prompt = request.messages[-1].content
        self.prompts.append(prompt)
        goal = prompt.split("## TA CURIOSITÉ", 1)[-1].split("##", 1)[0].strip()
        return json.dumps(
            {
                "action": self.action,
                "message": f"Au fait, {goal}" if self.action == "message" else "",
                "reason": "une curiosité",
                "tone": self.tone,
            }
        )


class Writer:
    """The model of the rules-decided lobby: summaries, then the message it is asked to write
    (never a decision); every prompt kept by schema."""

    def __init__(
        self, message: str = "Eko: Au fait, c'est quoi exactement Kraken FM ?", *, raw: bool = False
    ) -> None:
        self.message = message
        self.raw = raw  # answer the text itself, not the JSON asked for
        self.prompts: dict[str, list[str]] = {}

    def __call__(self, request: ProviderRequest) -> str:
        title = str((request.json_schema or {}).get("title", ""))
        self.prompts.setdefault(title, []).append(request.messages[-1].content)
        if title == "SummaryOutput":
            return json.dumps({"summary": "On parle de Kraken FM."})
        if title == "OpportunityMessage":
            return self.message if self.raw else json.dumps({"message": self.message})
        raise AssertionError(f"no decision call is expected, got {title}")


@dataclass
class LobbyKit:
    database: Database
    settings: Settings
    clock: Clock
    bus: RecordingBus
    script: ScriptedReflection
    items: MemoryItems
    reflector: Reflector
    room: Room
    users: list[User]

    async def say(self, content: str, *, user: int = 0, role: str = "user") -> Message:
        message, _ = await message_repo.append_message(
            self.database,
            room_id=self.room.id,
            role=role,
            content=content,
            sender_id=self.users[user].id if role == "user" else None,
            dedupe_key=f"test:{uuid.uuid4().hex}",
            created_at=self.clock(),
        )
        return message

    async def goal(self, subject: str, content: str) -> str:
        written = await self.items.remember(
            NewItem(kind="goal", subject=subject, content=content), scope=room_key(self.room.id)
        )
        return written.item.id

    def lobby(self) -> Lobby:
        """The whole proactive side (summarizer, opportunity path, reflector) over this kit's
        database, model, memory, clock and bus."""
        return build_lobby(
            settings=self.settings,
            database=self.database,
            runtime=self.reflector._runtime,
            items=self.items,
            embedder=HashEmbedder(),
            prompts=PromptLibrary(),
            events=self.bus,
            clock=self.clock,
        )

    async def remember(self, kind: str, subject: str, content: str) -> str:
        written = await self.items.remember(
            NewItem(kind=kind, subject=subject, content=content), scope=room_key(self.room.id)
        )
        return written.item.id


async def make_lobby_kit(
    database: Database,
    *,
    script: ScriptedReflection | None = None,
    model: Callable[[ProviderRequest], Any] | None = None,
    **overrides: Any,
) -> LobbyKit:
    settings = Settings(database_url=database.url, _env_file=None, **overrides)
    script = script or ScriptedReflection()
    runtime = LLMRuntime([FunctionModel(model or script)], DatabaseCallRecorder(database))
    embedder = HashEmbedder()
    items = MemoryItems(
        database=database,
        vectors=build_vector_index(database, settings),
        embedder=embedder,
        dedup_min_score=0.9,
    )
    clock = Clock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
    bus = RecordingBus()
    reflector = Reflector(
        database=database,
        runtime=runtime,
        items=items,
        prompts=PromptLibrary(),
        settings=settings,
        live=LivePhases(bus),
        events=bus,
        clock=clock,
    )
    room, users = await make_lobby(database)
    return LobbyKit(database, settings, clock, bus, script, items, reflector, room, users)
