"""The one model call of multi-hop recall: a list question's phrases, recalled as sub-queries
(eko/memory/query_expansion.py), its failures, and what the context, the chat and the API say."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from sqlalchemy import select

from eko.config import Settings
from eko.llm.errors import ProviderUnavailable
from eko.llm.providers import FunctionModel
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ProviderRequest
from eko.memory.query_expansion import PURPOSE, QueryExpander, phrase_lines
from eko.prompts.library import PromptLibrary
from eko.store.db import Database
from eko.store.llm_calls import DatabaseCallRecorder
from eko.store.models import LLMCall, Message, Room, User
from tests.api.conftest import HarnessFactory

from .conftest import MemoryKit

LIST_QUESTION = "What activities does Ann partake in?"
# Shares no word with the question: only a phrase can reach it (dense recall is off here).
CAMPING = "We went camping by the lake with the kids last weekend."
PHRASES = "\n".join(
    [
        "1. I went camping with the kids",
        "2. - I paint on Sundays",
        "3. What activities does Ann partake in?",
        "4. I paint on Sundays",
        "5. I swim",
    ]
)


def is_expansion(request: ProviderRequest) -> bool:
    return "The answer is spread over several messages" in request.messages[-1].content


def expander_model(reply: str = "Bonjour.") -> FunctionModel:
    return FunctionModel(lambda request: PHRASES if is_expansion(request) else reply)


async def _room_with_history(kit: MemoryKit) -> tuple[User, Room, Message]:
    ann = await kit.user("Ann")
    room = await kit.room(ann)
    await kit.say(room, CAMPING, user=ann)
    for day in range(6):
        await kit.say(room, f"The forecast for day {day} says rain again.", user=ann)
    question = await kit.say(room, LIST_QUESTION, user=ann)
    return ann, room, question


async def _purposes(database: Database) -> list[tuple[str, str | None]]:
    async with database.session() as session:
        rows = await session.execute(select(LLMCall.purpose, LLMCall.message_id))
        return [(row[0], row[1]) for row in rows]


def test_phrase_lines_drop_bullets_numbers_quotes_and_lines_without_a_word() -> None:
    text = '1. "I went camping"\n- She paints\n\n* “Moi aussi”  \n(3) ok go\n{}\n---'
    assert phrase_lines(text) == ["I went camping", "She paints", "Moi aussi", "ok go"]


async def test_a_list_question_recalls_what_only_a_phrase_reaches(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    settings = {"memory_recall_dense_k": 0, "recent_turns": 2, "memory_recall_expand": 3}
    kit = kit_factory([expander_model()], **settings)
    ann, room, question = await _room_with_history(kit)

    context = await kit.memory.context.build(
        room=room, user=ann, query=question.content, before_seq=question.seq, message_id=question.id
    )

    hop = context.stats["multihop"]
    assert hop["shape"] == "list"
    # The question itself and the repeated line are dropped; three kept, in the model's order.
    assert hop["phrases"] == ["I went camping with the kids", "I paint on Sundays", "I swim"]
    assert hop["sub_queries"] == hop["phrases"]
    assert "camping by the lake" in context.text
    assert await _purposes(kit.database) == [(PURPOSE, question.id)]

    off = kit_factory([expander_model()], **{**settings, "memory_recall_expand": 0})
    plain = await off.memory.context.build(
        room=room, user=ann, query=question.content, before_seq=question.seq
    )
    assert "phrases" not in plain.stats["multihop"]
    assert "camping by the lake" not in plain.text
    assert len(await _purposes(kit.database)) == 1  # no call when off


async def test_a_single_question_asks_the_model_nothing(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory([expander_model()], memory_recall_dense_k=0, recent_turns=2)
    ann, room, _ = await _room_with_history(kit)
    context = await kit.memory.context.build(room=room, user=ann, query="Where does Ann live?")
    assert context.stats["multihop"]["shape"] == "single"
    assert "phrases" not in context.stats["multihop"]
    assert await _purposes(kit.database) == []


def _down(request: ProviderRequest) -> str:
    raise ProviderUnavailable("function", "connection refused")


async def _slow(request: ProviderRequest) -> str:
    await asyncio.sleep(30)
    return PHRASES


@pytest.mark.parametrize(
    ("model", "error"),
    [
        (FunctionModel(_down), "model failed: "),
        (FunctionModel(_slow), "no answer within 0.2 s"),
        (FunctionModel.constant("{}"), "the model gave no phrase"),
    ],
    ids=["down", "late", "garbage"],
)
async def test_a_failed_expansion_leaves_the_rule_and_says_why(
    kit_factory: Callable[..., MemoryKit], model: FunctionModel, error: str
) -> None:
    kit = kit_factory(
        [model], memory_recall_dense_k=0, recent_turns=2, memory_recall_expand_timeout_s=0.2
    )
    ann, room, _ = await _room_with_history(kit)
    await kit.say(room, "My favourite activities are chess and running.", user=ann)
    await kit.say(room, "Rain again.", user=ann)
    await kit.say(room, "Rain again, still.", user=ann)

    context = await kit.memory.context.build(room=room, user=ann, query=LIST_QUESTION)

    hop = context.stats["multihop"]
    assert hop["phrases"] == [] and hop["expand_error"].startswith(error)
    assert hop["sub_queries"] == []
    # The words of the question still recall what shares them.
    assert "chess and running" in context.text


async def test_the_expander_is_bounded_by_its_setting(database: Database) -> None:
    calls: list[ProviderRequest] = []

    def model(request: ProviderRequest) -> str:
        calls.append(request)
        return PHRASES

    runtime = LLMRuntime([FunctionModel(model)], DatabaseCallRecorder(database))
    settings = Settings(database_url=database.url, _env_file=None, memory_recall_expand=1)
    expander = QueryExpander(runtime=runtime, prompts=PromptLibrary(), settings=settings)
    assert (await expander.expand("Quels livres Maria a-t-elle lus ?")).phrases == [
        "I went camping with the kids"
    ]
    assert "Quels livres Maria a-t-elle lus ?" in calls[0].messages[-1].content
    none = QueryExpander(
        runtime=runtime,
        prompts=PromptLibrary(),
        settings=settings.model_copy(update={"memory_recall_expand": 0}),
    )
    assert (await none.expand("Quels livres Maria a-t-elle lus ?")).phrases == []
    assert len(calls) == 1


async def test_the_chat_and_the_context_route_show_the_phrases(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(
        providers=[expander_model("Noted.")], memory_recall_dense_k=0, recent_turns=2
    ) as h:
        _, alice = await h.user("alice")
        room = await h.direct_room(alice)
        c = h.client
        for line in [CAMPING, "Rain today.", "Rain again.", "More rain."]:
            sent = await c.post(f"/v1/rooms/{room}/messages", headers=alice, json={"content": line})
            assert sent.status_code == 201
            await h.services.jobs.drain()
        asked = await c.post(
            f"/v1/rooms/{room}/messages", headers=alice, json={"content": LIST_QUESTION}
        )
        preview = await c.get(
            f"/v1/rooms/{room}/context", params={"q": LIST_QUESTION}, headers=alice
        )
        async with h.services.database.session() as session:
            purposes = list((await session.execute(select(LLMCall.purpose))).scalars())

    assert asked.status_code == 201
    memory_node = asked.json()["assistant_message"]["metadata"]["nodes"]["M"]
    assert memory_node["data"]["expanded"] == 3
    assert preview.status_code == 200
    stats = preview.json()["stats"]
    assert stats["multihop"]["phrases"][0] == "I went camping with the kids"
    assert "camping by the lake" in preview.json()["text"]
    assert purposes.count(PURPOSE) == 2  # one per question asked, the chat's and the preview's


async def test_a_new_conversation_asks_for_no_phrase(make_harness: HarnessFactory) -> None:
    """Phrases only feed the recall of turns older than the recent window: with none, the list
    question is answered without the call (up to its 8 s on a local model)."""
    async with make_harness(providers=[expander_model("Noted.")], recent_turns=2) as h:
        _, alice = await h.user("alice")
        room = await h.direct_room(alice)
        c = h.client
        first = await c.post(
            f"/v1/rooms/{room}/messages", headers=alice, json={"content": LIST_QUESTION}
        )
        preview = await c.get(
            f"/v1/rooms/{room}/context", params={"q": LIST_QUESTION}, headers=alice
        )
        async with h.services.database.session() as session:
            before = list((await session.execute(select(LLMCall.purpose))).scalars())
        # Two more exchanges push the first question out of the two-turn window: now asked.
        for line in (CAMPING, "Rain today."):
            await c.post(f"/v1/rooms/{room}/messages", headers=alice, json={"content": line})
        later = await c.get(f"/v1/rooms/{room}/context", params={"q": LIST_QUESTION}, headers=alice)
        async with h.services.database.session() as session:
            after = list((await session.execute(select(LLMCall.purpose))).scalars())

    assert first.status_code == 201 and preview.status_code == 200
    assert PURPOSE not in before
    skipped = preview.json()["stats"]["multihop"]
    assert skipped["expand_skipped"] == "no turn older than the recent window"
    assert "phrases" not in skipped
    assert after.count(PURPOSE) == 1
    assert later.json()["stats"]["multihop"]["phrases"][0] == "I went camping with the kids"
