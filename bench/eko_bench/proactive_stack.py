"""What `eko bench proactive` drives: a fresh lobby in a temporary SQLite database, the lobby's
services on a fake clock, and a keyword-scripted model (the baseline the local model is compared
with)."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from eko.config import Settings
from eko.embed.base import Embedder
from eko.embed.hashing import HashEmbedder
from eko.llm.runtime import LLMRuntime
from eko.llm.types import Provider, ProviderRequest
from eko.lobby.service import Lobby, build_lobby
from eko.memory.items import MemoryItems, NewItem
from eko.memory.relevance import dedup_min_score
from eko.memory.scopes import room_key
from eko.prompts.library import PromptLibrary
from eko.store import messages as message_repo
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.llm_calls import DatabaseCallRecorder
from eko.store.migrate import upgrade
from eko.store.models import Message, Room, User
from eko.store.vectors import build_vector_index

_WORD = re.compile(r"[\wÀ-ÿ']+")
_STOP = frozenset(
    [
        "alors",
        "avec",
        "cest",
        "c'est",
        "dans",
        "elle",
        "est",
        "être",
        "fait",
        "faire",
        "pour",
        "quoi",
        "quel",
        "quelle",
        "qui",
        "que",
        "sur",
        "tout",
        "tous",
        "une",
        "des",
        "les",
        "aux",
        "mon",
        "ton",
        "son",
        "nos",
        "vos",
        "leur",
        "cette",
        "mieux",
        "comprendre",
        "exactement",
        "veux",
        "savoir",
        "projet",
        "quelqu'un",
        "sait",
        "déjà",
        "ici",
    ]
)


class Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 4 and w not in _STOP}


def _section(prompt: str, title: str) -> str:
    part = prompt.split(title, 1)
    return part[1].split("\n## ", 1)[0] if len(part) == 2 else ""


@dataclass
class KeywordModel:
    """Speaks when a curiosity's words are in the last messages, or when the last message is a
    question sharing two words with a known fact; passes otherwise. Calls counted by schema."""

    calls: dict[str, int] = field(default_factory=dict)

    def __call__(self, request: ProviderRequest) -> str:
        title = str((request.json_schema or {}).get("title", ""))
        self.calls[title] = self.calls.get(title, 0) + 1
        prompt = request.messages[-1].content
        if title == "SummaryOutput":
            lines = _section(prompt, "## Messages").strip().splitlines()
            return json.dumps({"summary": " / ".join(lines[-3:])[:700]})
        if title == "OpportunityMessage":
            return json.dumps({"message": "(scripted message)"})
        if title == "ReflectionDecision":
            goal = _section(prompt, "## TA CURIOSITÉ").strip()
            return json.dumps(
                {
                    "action": "message",
                    "message": f"Au fait, {goal}",
                    "reason": "curiosité",
                    "tone": "playful",
                }
            )
        return json.dumps(self._opportunity(prompt))

    def _opportunity(self, prompt: str) -> dict[str, object]:
        lines = [x for x in _section(prompt, "## Derniers messages").strip().splitlines() if x]
        recent = " ".join(lines[-3:])
        last = lines[-1] if lines else ""
        goals = [
            g for g in _section(prompt, "## Tes curiosités").strip().splitlines() if g[:1].isdigit()
        ]
        for number, goal in enumerate(goals, start=1):
            if content_words(goal) & content_words(recent):
                return {
                    "action": "message",
                    "message": f"Au fait, {goal.split('. ', 1)[-1]}",
                    "reason": "on en parle",
                    "tone": "playful",
                    "confidence": 0.9,
                    "goal": number,
                }
        if "?" in last:
            for fact in _section(prompt, "## Ce que tu sais (faits)").splitlines():
                if len(content_words(fact) & content_words(last)) >= 2:
                    return {
                        "action": "message",
                        "message": fact.lstrip("- ") + ", non ?",
                        "reason": "un fait répond",
                        "tone": "helpful",
                        "confidence": 0.9,
                        "goal": 0,
                    }
        return {
            "action": "pass",
            "message": "",
            "reason": "rien",
            "tone": "playful",
            "confidence": 0.2,
            "goal": 0,
        }


@dataclass
class Stack:
    database: Database
    settings: Settings
    clock: Clock
    lobby: Lobby
    items: MemoryItems
    room: Room
    users: dict[str, User]

    async def say(self, speaker: str, text: str, *, at: datetime) -> Message:
        if speaker not in self.users:
            async with self.database.session() as session:
                user, _ = await user_repo.create_user(session, display_name=speaker)
                await room_repo.add_member(session, room_id=self.room.id, user_id=user.id)
            self.users[speaker] = user
        message, _ = await message_repo.append_message(
            self.database,
            room_id=self.room.id,
            role="user",
            content=text,
            sender_id=self.users[speaker].id,
            dedupe_key=f"bench:{uuid.uuid4().hex}",
            created_at=at,
        )
        return message

    async def remember(self, kind: str, subject: str, content: str) -> None:
        await self.items.remember(
            NewItem(kind=kind, subject=subject, content=content), scope=room_key(self.room.id)
        )


async def open_database(directory: Path) -> Database:
    database = Database(f"sqlite+aiosqlite:///{directory / f'proactive-{uuid.uuid4().hex}.db'}")
    await upgrade(database)
    return database


async def new_stack(
    database: Database,
    *,
    providers: Sequence[Provider],
    start: datetime,
    embedder: Embedder | None = None,
    **overrides: object,
) -> Stack:
    settings = Settings(database_url=database.url, _env_file=None, **overrides)  # type: ignore[arg-type]
    embedder = embedder or HashEmbedder()
    runtime = LLMRuntime(list(providers), DatabaseCallRecorder(database))
    items = MemoryItems(
        database=database,
        vectors=build_vector_index(database, settings),
        embedder=embedder,
        dedup_min_score=dedup_min_score(settings, embedder),
    )
    clock = Clock(start)
    lobby = build_lobby(
        settings=settings,
        database=database,
        runtime=runtime,
        items=items,
        embedder=embedder,
        prompts=PromptLibrary(),
        events=None,
        clock=clock,
    )
    async with database.session() as session:
        owner, _ = await user_repo.create_user(session, display_name="owner")
        room = await room_repo.create_room(
            session, kind="lobby", name="lobby", persona="eko", created_by=owner.id
        )
    return Stack(database, settings, clock, lobby, items, room, {})
