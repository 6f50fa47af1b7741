"""Dates a question names (English and French) and the turns of those periods in the context
(both backends)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from eko.memory.date_recall import seq_span
from eko.memory.dates import named_periods

from .conftest import MemoryKit


def _days(text: str) -> list[tuple[str, str]]:
    return [(p.start.date().isoformat(), p.end.date().isoformat()) for p in named_periods(text)]


def test_days_and_months_are_read_in_english_and_french() -> None:
    assert _days("What did she show on October 13, 2023?") == [("2023-10-13", "2023-10-14")]
    assert _days("as mentioned on 3 June, 2023") == [("2023-06-03", "2023-06-04")]
    assert _days("Qu'a dit Gina le 1er février 2023 ?") == [("2023-02-01", "2023-02-02")]
    assert _days("le 2024-03-05") == [("2024-03-05", "2024-03-06")]
    # A month with its year is the month; December ends with the year.
    assert _days("What happened in August 2023?") == [("2023-08-01", "2023-09-01")]
    assert _days("Et en décembre 2023 ?") == [("2023-12-01", "2024-01-01")]
    # Two periods, in order; a day is not also read as its month.
    assert _days("between 3 June 2023 and July 2023") == [
        ("2023-06-03", "2023-06-04"),
        ("2023-07-01", "2023-08-01"),
    ]


def test_what_is_not_a_period_is_left_alone() -> None:
    assert named_periods("How many times did she go to the beach in 2023?") == []  # too wide
    assert named_periods("May I ask you something?") == []
    assert named_periods("on 2023-13-01") == []  # not a day
    # A day that does not exist still names its month.
    assert _days("on 31 February 2023") == [("2023-02-01", "2023-03-01")]
    assert named_periods("") == []


async def test_a_named_day_recalls_that_days_turns(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory(recent_turns=1, memory_context_max_chars=1500, rag_max_summaries=0)
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    start = datetime(2023, 10, 1, 18, 0, tzinfo=UTC)
    # Every other day's turn shares the question's words; that day's says none of them: only
    # the date can bring it.
    for day in range(40):
        when = start + timedelta(days=day)
        said = (
            "Blue streaks on a canvas, finally done."
            if day == 12
            else f"I showed my painting, version {day + 100}, what a painting to show."
        )
        await kit.say(room, said, user=alice, created_at=when)
        await kit.say(room, "Lovely.", role="assistant", created_at=when + timedelta(minutes=1))
    question = await kit.say(
        room,
        "What painting did I show on October 13, 2023?",
        user=alice,
        created_at=start + timedelta(days=30),
    )
    built = await kit.memory.context.build(
        room=room, user=alice, query=question.content, before_seq=question.seq
    )
    assert "Blue streaks" in built.text
    assert built.stats["dates"][0]["start"].startswith("2023-10-13")
    assert built.stats["dated_turns"] >= 1

    undated = kit_factory(
        recent_turns=1,
        memory_context_max_chars=1500,
        rag_max_summaries=0,
        memory_recall_dates=False,
    )
    plain = await undated.memory.context.build(
        room=room, user=alice, query=question.content, before_seq=question.seq
    )
    assert "Blue streaks" not in plain.text
    async with kit.database.session() as session:
        [period] = named_periods("on October 13, 2023")
        span = await seq_span(session, room_id=room.id, period=period, before_seq=None)
        none = await seq_span(
            session,
            room_id=room.id,
            period=named_periods("on 1 January 2020")[0],
            before_seq=None,
        )
    assert span is not None and span[0] <= 25 < span[1]  # the day's turns, with the margin
    assert none is None
