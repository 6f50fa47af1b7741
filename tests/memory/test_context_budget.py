"""One budget for the dual context: the packing rule, and fact → source turn in recall."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from eko.memory.budget import BudgetRule, interleave, pack, shares
from eko.memory.context_parts import ItemPart, RecentPart, SummaryPart, render_context
from eko.memory.items import NewItem
from eko.memory.scopes import room_key
from eko.memory.turn_recall import RecalledTurn, n_then_one

from .conftest import MemoryKit

WHEN = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def _recent(chars: int) -> RecentPart:
    return RecentPart(turns=1, messages=1, first_seq=100, char_start=10_000, text="r" * chars)


def _turn(n: int, chars: int = 300) -> RecalledTurn:
    return RecalledTurn(n, n, WHEN, 1.0 / (n + 1), f"Ann: turn {n} " + "t" * chars)


def _summary(n: int, chars: int = 400) -> SummaryPart:
    return SummaryPart(f"s{n}", 1, n, n + 1, 0.9, 1.0, 1.0, 0.9, [], f"[L1 {n}] " + "s" * chars)


def _item(n: int) -> ItemPart:
    return ItemPart(f"i{n}", "fact", "Ann", f"fact number {n} " + "f" * 80, 0.9)


@pytest.mark.parametrize("total", [300, 1000, 2500, 4000, 8000, 16000])
def test_the_context_never_exceeds_the_budget_and_every_source_gets_a_share(total: int) -> None:
    rule = BudgetRule(total=total, recent_share=0.25, facts_share=0.2, turns_per_summary=2)
    recent = _recent(min(rule.recent_cap(5000), 1500))
    parts = pack(
        rule,
        recent=recent,
        items=[_item(n) for n in range(20)],
        recalled=[_turn(n) for n in range(60)],
        summaries=[_summary(n) for n in range(10)],
    )
    text = render_context(parts)
    assert len(text) <= total
    used = shares(parts)
    assert used["facts"] <= rule.facts_cap
    assert parts.recent.text  # recent first
    if total >= 4000:
        # Facts up to their share, then turns and summaries both, interleaved by rank.
        assert used["facts"] > 0 and parts.recalled and parts.summaries
        assert len(parts.recalled) >= len(parts.summaries)
        # Full: nothing left out would still fit.
        assert total - len(text) < len(_turn(0).text) + 40
        # By rank: the best turns and summaries are the ones kept.
        assert [t.first_seq for t in parts.recalled] == list(range(len(parts.recalled)))
        assert [s.summary_id for s in parts.summaries] == [
            f"s{n}" for n in range(len(parts.summaries))
        ]


def test_a_piece_that_does_not_fit_is_passed_over_for_a_smaller_one() -> None:
    rule = BudgetRule(total=1200, recent_share=0.1, facts_share=0.0)
    parts = pack(
        rule,
        recent=_recent(50),
        items=[],
        recalled=[_turn(0, 200), _turn(1, 5000), _turn(2, 200)],
        summaries=[],
    )
    assert [t.first_seq for t in parts.recalled] == [0, 2]
    assert len(render_context(parts)) <= 1200


def test_interleave_takes_n_turns_then_one_summary() -> None:
    turns, summaries = [_turn(n) for n in range(5)], [_summary(n) for n in range(3)]
    order = interleave(turns, summaries, 2)
    labels = [f"t{p.first_seq}" if isinstance(p, RecalledTurn) else p.summary_id for p in order]
    assert labels == ["t0", "t1", "s0", "t2", "t3", "s1", "t4", "s2"]


def test_n_then_one_puts_what_is_left_of_either_list_at_the_end() -> None:
    assert n_then_one([1, 2, 3, 4, 5], ["a"], 2) == [1, 2, "a", 3, 4, 5]
    assert n_then_one([1], ["a", "b", "c"], 4) == [1, "a", "b", "c"]
    assert n_then_one([], ["a"], 3) == ["a"]
    with pytest.raises(ValueError, match="at least 1"):
        n_then_one([1], ["a"], 0)


def test_the_rule_comes_from_the_settings_and_zero_turns_it_off() -> None:
    class Knobs:
        memory_context_max_chars = 8000
        memory_context_recent_share = 0.5
        memory_context_facts_share = 0.2
        memory_context_turns_per_summary = 3

    rule = BudgetRule.from_settings(Knobs())
    assert rule is not None and rule.recent_cap(5000) == 4000 and rule.facts_cap == 1600
    assert rule.recent_cap(1000) == 1000 and rule.candidates(12) == 32
    Knobs.memory_context_max_chars = 0
    assert BudgetRule.from_settings(Knobs()) is None


async def test_a_fact_in_the_context_pulls_its_source_turn_into_the_recalled_turns(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    # Words only, no overlap between the question and the source turn's words: only the fact
    # (found by the hash embedder's exact match) can bring the turn in.
    settings = {
        "recent_turns": 2,
        "memory_recall_dense_k": 0,
        "memory_context_max_chars": 4000,
        "memory_context_min_score": 0.0,
    }
    kit = kit_factory(**settings)
    ann = await kit.user("Ann")
    room = await kit.room(ann)
    source = await kit.say(
        room, "We finally adopted the tabby from the shelter, Biscuit!", user=ann
    )
    await kit.say(room, "Congratulations!", role="assistant")
    for i in range(3):
        await kit.say(room, f"Small talk number {i}.", user=ann)
        await kit.say(room, f"Reply {i}.", role="assistant")
    question = "Ann cat name"
    await kit.memory.items.remember_many(
        [NewItem("fact", "Ann", question, confidence=0.9, source_message_id=source.id)],
        scope=room_key(room.id),
    )
    current = await kit.say(room, question, user=ann)

    context = await kit.memory.context.build(
        room=room, user=ann, query=current.content, before_seq=current.seq
    )
    assert context.stats["fact_source_turns"] == 1
    assert [t.first_seq for t in context.parts.recalled] == [source.seq]
    assert "adopted the tabby from the shelter" in context.text
    assert len(context.text) <= 4000

    off = kit_factory(**settings, memory_fact_source_turns=False)
    quiet = await off.memory.context.build(
        room=room, user=ann, query=current.content, before_seq=current.seq
    )
    assert quiet.parts.recalled == [] and "tabby" not in quiet.text
