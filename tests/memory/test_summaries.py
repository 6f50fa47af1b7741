"""Hierarchical summaries: character triggers at every level, resumable, no duplicates, topics."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import func, select

from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.memory.summaries.calls import render_children
from eko.prompts.library import PromptLibrary
from eko.store.memory_models import Summary, SummaryParent, SummaryTopic, Topic
from eko.store.models import Embedding, LLMCall
from tests.api.conftest import HarnessFactory

from .conftest import MemoryKit, Summarizer, schema_title
from .summary_kit import EVERY, expected_ranges, fill, ranges


async def test_summaries_appear_at_every_n_chars_at_every_level(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    summarizer = Summarizer()
    kit = kit_factory([FunctionModel(summarizer)], summarize_every_n_chars=EVERY)
    alice = await kit.user("alice")
    room = await kit.room(alice)
    await fill(kit, room, alice, 29)  # 2,900 chars: 9 L1, 3 L2, 1 L3 (200 chars wait)

    result = await kit.memory.summaries.catch_up(room.id)

    assert await ranges(kit, room.id) == expected_ranges(2900)
    assert result.by_level() == {1: 9, 2: 3, 3: 1}
    assert result.model_calls == 13 and result.stopped is None
    # Each new summary cascades upwards first: L2 #1 right after L1 #3.
    assert [(s.level, s.char_range_start) for s in result.created][:5] == [
        (1, 0),
        (1, 300),
        (1, 600),
        (2, 0),
        (1, 900),
    ]
    async with kit.database.session() as session:
        l3 = (await session.execute(select(Summary).where(Summary.level == 3))).scalar_one()
        parents = (
            await session.execute(
                select(Summary.level, Summary.char_range_start)
                .join(SummaryParent, SummaryParent.parent_id == Summary.id)
                .where(SummaryParent.summary_id == l3.id)
                .order_by(SummaryParent.position)
            )
        ).all()
        vectors = (
            await session.execute(
                select(func.count()).select_from(Embedding).where(Embedding.collection == "summary")
            )
        ).scalar_one()
        purposes = (
            await session.execute(select(LLMCall.purpose, func.count()).group_by(LLMCall.purpose))
        ).all()
    assert [tuple(p) for p in parents] == [(2, 0), (2, 900), (2, 1800)]
    assert (l3.first_seq, l3.last_seq) == (1, 27)
    assert l3.char_count == 100
    assert vectors == 13
    assert dict(purposes) == {"summary_l1": 9, "summary_l2": 3, "summary_l3": 1}
    # Nothing left: a second run makes nothing and calls no model.
    again = await kit.memory.summaries.catch_up(room.id)
    assert again.created == [] and again.model_calls == 0


async def test_an_l1_segment_ends_at_the_first_message_boundary_past_the_threshold(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory([FunctionModel(Summarizer())], summarize_every_n_chars=EVERY)
    alice = await kit.user("alice")
    room = await kit.room(alice)
    for size in (250, 30, 40, 500, 10):  # 250, 280, 320 | 820 | 830
        await kit.say(room, "y" * size, user=alice)

    await kit.memory.summaries.catch_up(room.id)

    assert await ranges(kit, room.id) == [(1, 0, 320), (1, 320, 820)]


async def test_l1_input_links_tool_calls_to_their_reasoning(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    model = FunctionModel(Summarizer())
    kit = kit_factory([model], summarize_every_n_chars=EVERY, assistant_name="Eko")
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    await kit.say(room, "Show me validatePassword", user=alice)
    await kit.say(
        room,
        "Here's the implementation: " + "z" * 300,
        role="assistant",
        reasoning="I'll use get_function_code to retrieve the full implementation",
        tool_calls=[
            {
                "tool_name": "get_function_code",
                "arguments": {"name": "validatePassword"},
                "reasoning": "the user named the function",
                "result": "Returned 157 lines of code",
                "success": True,
            },
            {
                "name": "get_dependents",
                "args": {"scopeName": "validatePassword"},
                "success": False,
                "error": "timeout",
            },
        ],
    )

    await kit.memory.summaries.catch_up(room.id)

    text = model.requests[0].messages[-1].content
    assert 'User (Alice): "Show me validatePassword"' in text
    assert 'Reasoning: "I\'ll use get_function_code to retrieve the full implementation"' in text
    assert (
        '  - get_function_code(name="validatePassword")\n'
        '    Why: "the user named the function"\n'
        "    → Success: Returned 157 lines of code"
    ) in text
    assert '  - get_dependents(scopeName="validatePassword")\n    → Failed: timeout' in text
    assert "Assistant (Eko): \"Here's the implementation" in text
    assert "maxLength" in json.dumps(model.requests[0].json_schema)


async def test_topics_are_linked_merged_and_related(kit_factory: Callable[..., MemoryKit]) -> None:
    topic_script = {
        1: ["Authentification"],
        2: ["Auth refactoring"],
        3: ["Mots de passe"],
        4: ["Sécurité"],
    }

    def same(n: int, request: ProviderRequest) -> list[dict[str, Any]]:
        known = request.messages[-1].content
        assert "Known topics: Auth refactoring, Authentification, Mots de passe" in known
        return [
            {"first": "Authentification", "second": "Auth refactoring", "confidence": 0.93},
            {"first": "Mots de passe", "second": "Authentification", "confidence": 0.6},
            {"first": "Mots de passe", "second": "Inconnu", "confidence": 0.99},
        ]

    summarizer = Summarizer(topics=lambda n, r: topic_script.get(n, []), same_topics=same)
    kit = kit_factory([FunctionModel(summarizer)], summarize_every_n_chars=EVERY)
    alice = await kit.user("alice")
    room = await kit.room(alice)
    await fill(kit, room, alice, 9)  # 3 L1 then 1 L2

    await kit.memory.summaries.catch_up(room.id)

    views = {v.topic.name: v for v in await kit.memory.topics.list_topics(scope=f"room:{room.id}")}
    assert set(views) == {"Authentification", "Mots de passe", "Sécurité"}
    auth = views["Authentification"]
    assert auth.aliases == ["Auth refactoring"] and auth.summary_count == 2
    assert [(t.name, c) for t, c in auth.related] == [("Mots de passe", 0.6)]
    summaries = await kit.memory.summary_reader.list_summaries(room.id, level=2)
    decisions = summaries[0].summary.meta["topic_decisions"]
    assert [d["action"] for d in decisions] == ["merged", "related", "ignored"]
    # A merged name still resolves, to the topic it merged into.
    found = await kit.memory.topics.find(scope=f"room:{room.id}", ref="auth REFACTORING")
    assert found is not None and found.id == auth.topic.id
    # Search constrained to the topic covers the merged alias's summaries.
    hits = await kit.memory.summary_reader.search(room.id, query="conv", topic="Auth refactoring")
    assert sorted(h.summary.char_range_start for h in hits) == [0, 300]
    with pytest.raises(LookupError):
        await kit.memory.summary_reader.search(room.id, query="conv", topic="nope")
    async with kit.database.session() as session:
        merged = (
            await session.execute(select(Topic).where(Topic.name == "Auth refactoring"))
        ).scalar_one()
        links = (
            await session.execute(
                select(func.count())
                .select_from(SummaryTopic)
                .where(SummaryTopic.topic_id == merged.id)
            )
        ).scalar_one()
    assert merged.merged_into_id == auth.topic.id and links == 0


def test_higher_level_input_follows_the_seed_format() -> None:
    from datetime import UTC, datetime

    child = Summary(
        level=1,
        char_range_start=0,
        char_range_end=10000,
        conversation_summary="L'utilisateur a demandé X",
        actions_summary="J'ai utilisé Y",
        period_start=datetime(2025, 1, 15, tzinfo=UTC),
        period_end=datetime(2025, 1, 15, tzinfo=UTC),
        id="s1",
    )
    text = render_children([child], {"s1": ["auth"]})
    assert text.startswith(
        "L1 Summary #1 (chars 0-10000, 2025-01-15 to 2025-01-15):\n"
        '  Conversation: "L\'utilisateur a demandé X"\n'
        '  Actions: "J\'ai utilisé Y"'
    )
    assert text.endswith("Known topics: auth")


async def test_the_hook_builds_summaries_after_replies_through_the_api(
    make_harness: HarnessFactory,
) -> None:
    summarizer = Summarizer()

    def model(request: ProviderRequest) -> str:
        if schema_title(request) in ("L1Summary", "HigherSummary"):
            return summarizer(request)
        return "r".ljust(150, "r")  # a 150-character reply

    async with make_harness(providers=[FunctionModel(model)], summarize_every_n_chars=EVERY) as h:
        _, headers = await h.user("alice")
        room_id = await h.direct_room(headers)
        for i in range(6):
            response = await h.client.post(
                f"/v1/rooms/{room_id}/messages",
                json={"content": f"q{i} ".ljust(150, "q")},
                headers=headers,
            )
            assert response.status_code == 201
            await h.services.jobs.drain()
        listed = (await h.client.get(f"/v1/rooms/{room_id}/summaries", headers=headers)).json()
        level_2 = (
            await h.client.get(f"/v1/rooms/{room_id}/summaries?level=2", headers=headers)
        ).json()

    # 12 messages × 150 = 1,800 chars: 6 L1, 2 L2.
    assert [(s["level"], s["char_range_start"], s["char_range_end"]) for s in listed] == [
        *((1, i * 300, (i + 1) * 300) for i in range(6)),
        (2, 0, 900),
        (2, 900, 1800),
    ]
    assert len(level_2) == 2 and len(level_2[0]["parent_ids"]) == 3


def test_prompt_files_exist() -> None:
    prompts = PromptLibrary()
    for name in ("summary_l1.md", "summary_higher.md", "extract.md"):
        assert "$max_chars" in prompts.text(f"memory/{name}") or name == "extract.md"
