"""A segment larger than the summarizer's input is summarized in parts, then merged: every
turn reaches a model call, every call fits the input budget, nothing is cut."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import select

from eko.llm.providers import FunctionModel
from eko.memory.summaries.calls import pack_blocks, split_text
from eko.store.models import LLMCall, Room, User

from .conftest import MemoryKit, Summarizer

BUDGET = 1200


def _words(message: int, size: int) -> list[str]:
    """Words unique to one message (w<message>_<word>), so a cut anywhere shows."""
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < size:
        words.append(f"w{message}_{len(words)}")
    return words


async def _fill_numbered(kit: MemoryKit, room: Room, user: User, count: int, size: int) -> None:
    for i in range(count):
        words = _words(i, size)
        role = "user" if i % 2 == 0 else "assistant"
        await kit.say(room, " ".join(words), user=user if role == "user" else None, role=role)


async def test_every_turn_of_a_long_segment_reaches_a_model_call(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    model = FunctionModel(Summarizer())
    kit = kit_factory([model], summarize_every_n_chars=6000, summary_input_max_chars=BUDGET)
    alice = await kit.user("alice")
    room = await kit.room(alice)
    await _fill_numbered(kit, room, alice, 10, size=600)  # ≥ 6,000 chars: one L1 segment, all 10

    result = await kit.memory.summaries.catch_up(room.id)

    assert result.by_level() == {1: 1}
    inputs = [request.messages[-1].content for request in model.requests]
    assert all(len(text) <= BUDGET for text in inputs)
    seen = " ".join(inputs)
    async with kit.database.session() as session:
        calls = (await session.execute(select(LLMCall.purpose).order_by(LLMCall.id))).all()
    for i in range(10):
        missing = [w for w in _words(i, 600) if f"{w} " not in seen and f'{w}"' not in seen]
        assert not missing, f"message {i}: {len(missing)} words never reached a model"
    purposes = [row[0] for row in calls]
    parts = purposes.count("summary_l1_part")
    assert parts >= 5  # 6,000 characters cannot fit fewer 1,200-character inputs
    assert purposes[-1] == "summary_l1" and purposes.count("summary_l1") == 1
    assert result.model_calls == len(purposes)
    summary = (await kit.memory.summary_reader.list_summaries(room.id))[0].summary
    assert summary.meta["parts"] == parts and summary.meta["calls"] == len(purposes)


async def test_the_merge_reads_every_part_summary(kit_factory: Callable[..., MemoryKit]) -> None:
    model = FunctionModel(Summarizer(conversation_chars=60, actions_chars=40))
    kit = kit_factory([model], summarize_every_n_chars=3000, summary_input_max_chars=BUDGET)
    alice = await kit.user("alice")
    room = await kit.room(alice)
    await _fill_numbered(kit, room, alice, 6, size=600)

    await kit.memory.summaries.catch_up(room.id)

    part_count = sum(1 for r in model.requests if "Part " not in r.messages[-1].content)
    merge = model.requests[part_count].messages[-1].content
    # The scripted summarizer numbers its answers: the merge quotes each part's, in order.
    for n in range(1, part_count + 1):
        assert f'Conversation: "conv {n} ' in merge
    assert "merge them into one summary" in model.requests[part_count].messages[0].content.lower()


async def test_a_segment_that_fits_is_one_call_as_before(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    model = FunctionModel(Summarizer())
    kit = kit_factory([model], summarize_every_n_chars=1000, summary_input_max_chars=3000)
    alice = await kit.user("alice")
    room = await kit.room(alice)
    await _fill_numbered(kit, room, alice, 4, size=300)

    result = await kit.memory.summaries.catch_up(room.id)

    assert result.model_calls == 1 and len(model.requests) == 1
    summary = (await kit.memory.summary_reader.list_summaries(room.id))[0].summary
    assert summary.meta["parts"] == 1


def test_split_and_pack_keep_every_word_within_the_budget() -> None:
    text = " ".join(f"word{i}" for i in range(500))
    pieces = split_text(text, 100)
    assert all(len(p) <= 100 for p in pieces)
    assert " ".join(pieces).split() == text.split()
    blocks = ["a" * 30, "b" * 30, "c" * 250, "d" * 10]
    parts = pack_blocks(blocks, 80)
    assert all(len(p) <= 80 for p in parts)
    assert "".join(parts).replace("\n", "") == "".join(blocks)
    assert parts[0] == "a" * 30 + "\n\n" + "b" * 30
