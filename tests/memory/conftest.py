"""A memory layer on the current backend, with a scripted model and the hash embedder."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest

from eko.config import Settings
from eko.embed.base import Embedder
from eko.embed.hashing import HashEmbedder
from eko.llm.providers import FunctionModel
from eko.llm.runtime import LLMRuntime
from eko.llm.types import Provider, ProviderRequest
from eko.memory.service import Memory, build_memory
from eko.prompts.library import PromptLibrary
from eko.store import messages as message_repo
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.llm_calls import DatabaseCallRecorder
from eko.store.models import Message, Room, User
from eko.store.vectors import VectorIndex, build_vector_index
from tests.api.conftest import Harness, make_harness  # noqa: F401  (the API harness)


def schema_title(request: ProviderRequest) -> str:
    return str((request.json_schema or {}).get("title", ""))


class Summarizer:
    """A scripted summary model: fixed-length parts (so level thresholds are predictable),
    topics from a script, and every request kept."""

    def __init__(
        self,
        *,
        conversation_chars: int = 60,
        actions_chars: int = 40,
        topics: Callable[[int, ProviderRequest], list[str]] | None = None,
        same_topics: Callable[[int, ProviderRequest], list[dict[str, Any]]] | None = None,
    ) -> None:
        self.calls = 0
        self.conversation_chars = conversation_chars
        self.actions_chars = actions_chars
        self._topics = topics or (lambda n, request: [])
        self._same = same_topics or (lambda n, request: [])

    def __call__(self, request: ProviderRequest) -> str:
        self.calls += 1
        n = self.calls
        title = schema_title(request)
        body: dict[str, Any] = {
            "conversation_summary": f"conv {n} ".ljust(self.conversation_chars, "c"),
            "actions_summary": f"act {n} ".ljust(self.actions_chars, "a"),
            "topics": self._topics(n, request),
        }
        if title == "HigherSummary":
            body["same_topics"] = self._same(n, request)
        return json.dumps(body)


@dataclass
class MemoryKit:
    database: Database
    settings: Settings
    memory: Memory
    model: FunctionModel
    embedder: Embedder
    vectors: VectorIndex

    async def user(self, name: str, *, role: str = "member") -> User:
        async with self.database.session() as session:
            user, _ = await user_repo.create_user(session, display_name=name, role=role)
            return user

    async def room(
        self, owner: User, *, kind: str = "direct", members: Sequence[User] = ()
    ) -> Room:
        async with self.database.session() as session:
            room = await room_repo.create_room(
                session,
                kind=kind,
                name=f"{owner.display_name}'s",
                persona="eko",
                created_by=owner.id,
            )
            for member in members:
                await room_repo.add_member(session, room_id=room.id, user_id=member.id)
            return room

    async def say(
        self,
        room: Room,
        content: str,
        *,
        user: User | None = None,
        role: str = "user",
        created_at: datetime | None = None,
        reasoning: str | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
    ) -> Message:
        message, _ = await message_repo.append_message(
            self.database,
            room_id=room.id,
            role=role,
            content=content,
            sender_id=user.id if user is not None else None,
            dedupe_key=f"test:{uuid.uuid4().hex}",
            created_at=created_at,
            reasoning=reasoning,
            tool_calls=tool_calls,
        )
        return message


def make_kit(
    database: Database,
    providers: Sequence[Provider] | None = None,
    *,
    embedder: Embedder | None = None,
    **overrides: Any,
) -> MemoryKit:
    settings = Settings(database_url=database.url, _env_file=None, **overrides)
    model = FunctionModel.constant("{}")
    provider_list = list(providers) if providers is not None else [model]
    if providers and isinstance(providers[0], FunctionModel):
        model = providers[0]
    runtime = LLMRuntime(provider_list, DatabaseCallRecorder(database))
    embedder = embedder or HashEmbedder()
    vectors = build_vector_index(database, settings)
    memory = build_memory(
        settings=settings,
        database=database,
        runtime=runtime,
        embedder=embedder,
        vectors=vectors,
        prompts=PromptLibrary(),
    )
    return MemoryKit(database, settings, memory, model, embedder, vectors)


@pytest.fixture
def kit_factory(database: Database) -> Callable[..., MemoryKit]:
    """`kit_factory(providers=[...], summarize_every_n_chars=300, ...)` → a MemoryKit."""

    def factory(providers: Sequence[Provider] | None = None, **overrides: Any) -> MemoryKit:
        return make_kit(database, providers, **overrides)

    return factory
