"""One recent window per message: every earlier message reaches the writer by some route.

Through the API with a scripted model that keeps every request: after 30 exchanges, asking
about each earlier message in turn (newest first, so at every distance from 1 to 59 turns)
puts that message's words in the writer's prompt, either
among the chat messages (the recent window) or in the memory section (a recalled turn or a
summary). A window counted in messages in one place and in turns in another hides the
messages between the two from the writer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy.exc import SQLAlchemyError

from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.memory.recent import META_KEYS, RecentReader, RecentWindow
from eko.store import users as user_repo
from tests.api.conftest import Harness, HarnessFactory

from .conftest import schema_title

EXCHANGES = 30
SYLLABLES = ("ka", "lo", "mi", "ne", "po", "ru", "sa", "ti", "vu", "ze")


def invented(number: int, tail: str) -> str:
    """A word no dictionary, stemmer or stop list knows, unique per number."""
    digits = f"{number:03d}"
    return "".join(SYLLABLES[int(d)] for d in digits) + tail


async def pro_user(h: Harness, name: str) -> tuple[str, dict[str, str]]:
    """A user past the free quota's reach (60 messages here)."""
    async with h.services.database.session() as session:
        user, key = await user_repo.create_user(session, display_name=name, is_pro=True)
        return user.public_id, {"Authorization": f"Bearer {key}"}


def writer_prompt(request: ProviderRequest) -> str:
    return "\n".join(message.content for message in request.messages)


def is_writer(request: ProviderRequest) -> bool:
    return request.json_schema is None and "<luciform" in request.messages[0].content


def scripted(request: ProviderRequest) -> str:
    if schema_title(request) == "MemoryExtraction":
        return json.dumps({"items": [], "answered_goals": []})
    return "Noté."


async def test_every_earlier_message_reaches_the_writer_by_some_route(
    make_harness: HarnessFactory,
) -> None:
    model = FunctionModel(scripted)
    async with make_harness(providers=[model]) as h:
        _, headers = await pro_user(h, "alice")
        room = await h.direct_room(headers)
        for number in range(EXCHANGES):
            said = f"Note {number}: the word {invented(number, 'x')} means {invented(number, 'q')}."
            sent = await h.client.post(
                f"/v1/rooms/{room}/messages", headers=headers, json={"content": said}
            )
            assert sent.status_code == 201, sent.text
        missing: list[int] = []
        windows: list[int] = []
        # Newest first: note n is then 2·(29 − n) + 1 turns back when asked about (1, 3, … 59),
        # through the recent window, the stretch just before it, and far behind.
        for number in reversed(range(EXCHANGES)):
            before = len(model.requests)
            asked = await h.client.post(
                f"/v1/rooms/{room}/messages",
                headers=headers,
                json={"content": f"What does {invented(number, 'x')} mean?"},
            )
            assert asked.status_code == 201, asked.text
            writers = [r for r in model.requests[before:] if is_writer(r)]
            assert len(writers) == 1
            prompt = writer_prompt(writers[0])
            if invented(number, "q") not in prompt:
                missing.append(number)
            windows.append(sum(1 for m in writers[0].messages if m.role != "system"))

    assert missing == [], f"messages that reached the writer by no route: {missing}"
    # The window is counted in turns: 10 exchanges (20 messages) and the question itself.
    assert max(windows) == 2 * h.settings.recent_turns + 1


async def test_the_window_is_read_once_per_message(
    make_harness: HarnessFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The context loader, memory, the chain and the writer share the window the chat service
    read: one read per answered message, whoever holds a reader."""
    reads: list[str] = []
    original = RecentReader.read

    async def counting(self: RecentReader, session: Any, **kwargs: Any) -> RecentWindow:
        reads.append(str(kwargs["room_id"]))
        return await original(self, session, **kwargs)

    monkeypatch.setattr(RecentReader, "read", counting)
    model = FunctionModel(scripted)
    async with make_harness(providers=[model]) as h:
        _, headers = await h.user("bob")
        room = await h.direct_room(headers)
        for text in ("Bonjour !", "Je m'appelle Bob.", "Tu te souviens de mon nom ?"):
            sent = await h.client.post(
                f"/v1/rooms/{room}/messages", headers=headers, json={"content": text}
            )
            assert sent.status_code == 201, sent.text
            assert sent.json()["assistant_message"]["content"] == "Noté."
    assert reads == [room, room, room]


async def test_the_window_reads_only_the_metadata_its_readers_use(
    make_harness: HarnessFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reply's metadata is ~5 KB of JSON (plan, nodes, timings): the window reads only the
    continuity keys (META_KEYS) in SQL, and a message's `meta` it holds cannot be read by
    mistake. The writer's next turn still knows the previous reply's intent and mode."""
    windows: list[RecentWindow] = []
    original = RecentReader.read

    async def keeping(self: RecentReader, session: Any, **kwargs: Any) -> RecentWindow:
        window = await original(self, session, **kwargs)
        windows.append(window)
        return window

    monkeypatch.setattr(RecentReader, "read", keeping)
    async with make_harness(providers=[FunctionModel(scripted)]) as h:
        _, headers = await h.user("bob")
        room = await h.direct_room(headers)
        replies = []
        for text in ("Bonjour !", "Quelle est la capitale du Pérou ?"):
            sent = await h.client.post(
                f"/v1/rooms/{room}/messages", headers=headers, json={"content": text}
            )
            assert sent.status_code == 201, sent.text
            replies.append(sent.json()["assistant_message"])
    last = windows[-1]
    reply = replies[0]
    assert reply["metadata"]["intent"] and reply["metadata"]["mode"]
    assert dict(last.meta[reply["id"]]) == {
        key: reply["metadata"][key] for key in META_KEYS if reply["metadata"].get(key)
    }
    held = next(message for message in last.messages if message.id == reply["id"])
    with pytest.raises(SQLAlchemyError):  # not loaded: never a silent partial dict
        _ = held.meta
