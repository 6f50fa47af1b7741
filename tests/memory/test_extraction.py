"""After-reply extraction: one structured call, dedup, curiosity → fact, failures swallowed."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eko.llm.errors import ProviderTimeout
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.memory.extraction import ExtractionHook
from eko.memory.items import NewItem
from eko.memory.scopes import room_key, user_key
from eko.store.models import Message, Room, User

from .conftest import MemoryKit, schema_title


@dataclass(frozen=True)
class FakeTurn:
    user: User
    room: Room
    user_message: Message


def extraction(
    items: list[dict[str, Any]] | None = None, answered: list[dict[str, Any]] | None = None
) -> str:
    return json.dumps({"items": items or [], "answered_goals": answered or []})


async def _exchange(kit: MemoryKit, room: Room, user: User, text: str, answer: str) -> FakeTurn:
    message = await kit.say(room, text, user=user)
    reply = await kit.say(room, answer, role="assistant")
    turn = FakeTurn(user=user, room=room, user_message=message)
    await ExtractionHook(kit.memory.extractor).after(turn, reply)
    return turn


async def test_five_curiosities_about_corentin_make_one_goal(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    variants = iter(
        [
            "Qui est Corentin ?",
            "qui est Corentin",
            "Qui est Corentin ?!",
            "QUI EST CORENTIN ?",
            "Qui est Corentin",
        ]
    )

    def model(request: ProviderRequest) -> str:
        assert schema_title(request) == "MemoryExtraction"
        return extraction(
            [{"kind": "goal", "subject": "Corentin", "content": next(variants), "confidence": 0.7}]
        )

    kit = kit_factory([FunctionModel(model)])
    mickael, david = await kit.user("Mickael"), await kit.user("David")
    lobby = await kit.room(mickael, kind="lobby", members=[david])
    for speaker in (mickael, david, mickael, david, mickael):
        await _exchange(
            kit, lobby, speaker, "Eko, Corentin passe demain au bureau", "Super, je note !"
        )

    goals = await kit.memory.items.list_items(keys=None, kind="goal")
    assert len(goals) == 1
    assert goals[0].scope == room_key(lobby.id)  # lobby talk is lobby-scoped
    assert goals[0].mention_count == 5 and goals[0].status == "open"


async def test_an_answered_curiosity_becomes_a_fact_and_the_goal_closes(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    def model(request: ProviderRequest) -> str:
        prompt = request.messages[-1].content
        assert "1. [Corentin] Qui est Corentin ? (the assistant asked it)" in prompt
        assert 'Just before, Eko: "Au fait, qui est Corentin ?"' in prompt
        return extraction(answered=[{"goal": 1, "answer": "Corentin est dev chez lemlist"}])

    kit = kit_factory([FunctionModel(model)])
    david = await kit.user("David")
    lobby = await kit.room(david, kind="lobby")
    goal = (
        await kit.memory.items.remember(
            NewItem("goal", "Corentin", "Qui est Corentin ?"), scope=room_key(lobby.id)
        )
    ).item
    await kit.memory.items.mark_asked(goal.id)
    await kit.say(lobby, "Au fait, qui est Corentin ?", role="assistant")

    turn = await _exchange(
        kit, lobby, david, "Eko, Corentin est dev chez lemlist", "Merci, je retiens !"
    )

    closed = await kit.memory.items.get(goal.id)
    assert closed is not None and closed.status == "answered"
    facts = await kit.memory.items.list_items(keys=[room_key(lobby.id)], kind="fact")
    assert [(f.subject, f.content) for f in facts] == [
        ("Corentin", "Corentin est dev chez lemlist")
    ]
    assert closed.answer_item_id == facts[0].id
    assert facts[0].source_message_id == turn.user_message.id


async def test_facts_from_a_direct_room_are_private_to_the_speaker(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    model = FunctionModel(
        lambda request: extraction(
            [
                {
                    "kind": "fact",
                    "subject": "Alice",
                    "content": "Alice vit à Besançon",
                    "confidence": 0.9,
                },
                {
                    "kind": "self",
                    "subject": "name",
                    "content": "On m'appelle Eko",
                    "confidence": 1.7,
                },
                {"kind": "fact", "subject": "x", "content": "   ", "confidence": 0.5},
            ]
        )
    )
    kit = kit_factory([model])
    alice = await kit.user("Alice")
    room = await kit.room(alice)

    await _exchange(
        kit, room, alice, "J'habite à Besançon depuis mars. Je t'appellerai Eko.", "Noté !"
    )

    items = await kit.memory.items.list_items(keys=None)
    assert {(i.kind, i.scope) for i in items} == {
        ("fact", user_key(alice)),
        ("self", user_key(alice)),
    }
    assert all(0 <= i.confidence <= 1 for i in items)  # 1.7 was clamped
    assert len(model.requests) == 1  # ONE model call per exchange


async def test_a_model_failure_or_a_wrong_goal_number_writes_nothing(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory(
        [
            FunctionModel.scripted(
                ProviderTimeout("function", "slow"),
                extraction(answered=[{"goal": 7, "answer": "n'importe quoi"}]),
            )
        ]
    )
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    goal = (
        await kit.memory.items.remember(
            NewItem("goal", "Kraken", "C'est quoi Kraken FM ?"), scope=user_key(alice)
        )
    ).item

    await _exchange(kit, room, alice, "Kraken FM est une radio associative", "Ah !")
    await _exchange(kit, room, alice, "Kraken FM est une radio associative", "Ah !")

    assert [i.id for i in await kit.memory.items.list_items(keys=None)] == [goal.id]
    unchanged = await kit.memory.items.get(goal.id)
    assert unchanged is not None and unchanged.status == "open"


async def test_short_messages_and_paywall_replies_cost_no_call(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    model = FunctionModel.constant(extraction())
    kit = kit_factory([model])
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    hook = ExtractionHook(kit.memory.extractor, min_chars=12)
    short = await kit.say(room, "ok merci", user=alice)
    paid = await kit.say(room, "Peux-tu m'aider avec mon projet ?", user=alice)
    reply = await kit.say(room, "Voici", role="assistant")
    paywall = await kit.say(room, "Quota atteint", role="assistant")
    paywall.type = "paywall"

    await hook.after(FakeTurn(alice, room, short), reply)
    await hook.after(FakeTurn(alice, room, paid), paywall)

    assert model.requests == []
