"""ConversationGuard: what the message pipeline gets from the guard for a new message."""

from __future__ import annotations

import pytest

from eko.guard.conversation import CachedAnswer, ConversationGuard, GuardMiss
from eko.guard.replies import GuardLearning
from eko.guard.scope import Scope
from eko.guard.service import GuardService
from eko.store.db import Database
from tests.guard.conftest import GuardFactory

QUESTION = "How do I reset my password on the Eko portal?"
ANSWER = "Open Settings, then Security, then Reset password."


def _conversation(
    guard: GuardService, database: Database, *, enabled: bool = True
) -> ConversationGuard:
    learning = GuardLearning(guard, database, assistant_name="Eko")
    return ConversationGuard(guard, learning, assistant_name="Eko", enabled=enabled)


async def _ask(
    conversation: ConversationGuard, question: str, user: str
) -> CachedAnswer | GuardMiss | None:
    return await conversation.answer(
        question=question, persona="eko", user_public_id=user, room_id="r", message_id="m"
    )


async def test_a_hit_becomes_the_answer_and_the_replys_metadata(
    make_guard: GuardFactory, database: Database
) -> None:
    guard = make_guard()
    await guard.learn(question=QUESTION, answer=ANSWER, scope=Scope("eko"))
    conversation = _conversation(guard, database)

    cached = await conversation.answer(
        question=f"@Eko, {QUESTION}",  # the address is not part of the question
        persona="eko",
        user_public_id="alice",
        room_id="r",
        message_id="m",
    )

    assert isinstance(cached, CachedAnswer) and cached.text == ANSWER
    assert cached.meta["action"] == "respond_from_memory"
    assert cached.meta["memory_guard"]["match"] == "exact"


async def test_only_the_askers_own_private_scope_is_searched(
    make_guard: GuardFactory, database: Database
) -> None:
    guard = make_guard()
    await guard.learn(question=QUESTION, answer=ANSWER, scope=Scope("eko", "alice"))
    conversation = _conversation(guard, database)

    assert await _ask(conversation, QUESTION, "alice") is not None
    assert await _ask(conversation, QUESTION, "bob") is None


async def test_nothing_is_served_when_off_or_when_the_lookup_fails(
    make_guard: GuardFactory, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    guard = make_guard()
    await guard.learn(question=QUESTION, answer=ANSWER, scope=Scope("eko"))
    assert await _ask(_conversation(guard, database, enabled=False), QUESTION, "alice") is None

    async def broken(*_: object, **__: object) -> None:
        raise RuntimeError("vector index down")

    monkeypatch.setattr(guard, "lookup", broken)
    # The cache is an optimisation: the writer answers as usual.
    assert await _ask(_conversation(guard, database), QUESTION, "alice") is None


async def test_a_close_entry_refused_by_a_rule_is_a_miss_that_says_why(
    make_guard: GuardFactory, database: Database
) -> None:
    guard = make_guard(threshold=0.2)
    await guard.learn(question=QUESTION, answer=ANSWER, scope=Scope("eko"))
    conversation = _conversation(guard, database)

    # The same question about another product: close, refused by the names rule.
    miss = await _ask(conversation, "How do I reset my password on the Acme portal?", "alice")
    assert isinstance(miss, GuardMiss)
    refused = miss.meta["memory_guard"]
    assert refused["served"] is False
    assert refused["reason"] == "names"
    assert refused["nearest"]["check"]["failed"] == ["names"]
    # Nothing near at all: a plain miss, nothing to say.
    assert await _ask(conversation, "Quelle heure est-il à Tokyo ?", "alice") is None
