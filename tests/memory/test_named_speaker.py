"""A question that names one member of the room recalls that member's turns first (both
backends): "what does Melanie make?" is answered by what Melanie said, not by Caroline's
turns sharing its words."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from eko.memory.speakers import RoomSpeakers
from eko.memory.turn_recall import recall_turns
from eko.store.models import Room, User

from .conftest import MemoryKit, make_kit

SPEAKERS = RoomSpeakers({1: "Caroline Smith", 2: "Melanie", 3: "Hélène"}, "Eko")


def test_the_one_member_a_question_names() -> None:
    assert SPEAKERS.named_member("What pottery does Melanie make?") == 2
    assert SPEAKERS.named_member("What did caroline say?") == 1  # any word of the name, any case
    assert SPEAKERS.named_member("Qu'a dit Helene ?") == 3  # accents folded
    assert SPEAKERS.named_member("What did Smith paint?") == 1


def test_no_preference_when_a_question_names_nobody_or_several() -> None:
    assert SPEAKERS.named_member("What pottery do you make?") is None
    assert SPEAKERS.named_member("What did Eko say?") is None  # the assistant is not a member
    assert SPEAKERS.named_member("Did Caroline and Melanie both paint?") is None
    assert SPEAKERS.named_member("What did Melanies say?") is None  # a word, not a prefix


@dataclass
class PotteryRoom:
    room: Room
    caroline: User
    melanie: User
    said: dict[int, str]  # seq -> speaker


async def _pottery_room(kit: MemoryKit) -> PotteryRoom:
    """Caroline's pottery turns rank first by words (both of the question's words: "pottery",
    "make"); Melanie's after (one)."""
    caroline, melanie = await kit.user("Caroline"), await kit.user("Melanie")
    room = await kit.room(caroline, kind="lobby", members=[melanie])
    said: dict[int, str] = {}
    for i in range(3):
        turn = await kit.say(room, f"I make pottery {i}.", user=caroline)
        said[turn.seq] = "Caroline"
    for i in range(3):
        turn = await kit.say(
            room, f"My pottery class {i} was fun, we had tea after it.", user=melanie
        )
        said[turn.seq] = "Melanie"
    return PotteryRoom(room, caroline, melanie, said)


async def test_the_named_members_turns_come_first_and_the_others_keep_a_place(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory()
    pottery = await _pottery_room(kit)

    async def speakers_in_order(prefer: int | None) -> list[str]:
        async with kit.database.session() as session:
            recalled = await recall_turns(
                session,
                dialect=kit.database.dialect,
                room_id=pottery.room.id,
                query="What pottery does Melanie make?",
                before_seq=None,
                max_chars=5000,
                assistant_name="Eko",
                neighbours=0,
                ignore_words={"melanie", "caroline"},
                prefer_sender=prefer,
                preferred_per_other=2,
            )
        return [pottery.said[turn.first_seq] for turn in recalled]

    assert await speakers_in_order(None) == ["Caroline"] * 3 + ["Melanie"] * 3
    assert await speakers_in_order(pottery.melanie.id) == [
        "Melanie",
        "Melanie",
        "Caroline",
        "Melanie",
        "Caroline",
        "Caroline",
    ]


@pytest.mark.parametrize(("per_other", "first"), [(4, "Melanie"), (0, "Caroline")])
async def test_the_context_recalls_the_named_members_turns_first_unless_turned_off(
    kit_factory: Callable[..., MemoryKit], per_other: int, first: str
) -> None:
    database = kit_factory().database
    kit = make_kit(
        database,
        recent_turns=1,
        lobby_recent_turns=1,
        memory_recall_dense_k=0,  # words only: the order is the full-text one
        memory_recall_neighbours=0,
        memory_recall_named_speaker=per_other,
    )
    pottery = await _pottery_room(kit)
    await kit.say(pottery.room, "See you soon!", user=pottery.caroline)  # the recent window
    question = await kit.say(pottery.room, "What pottery does Melanie make?", user=pottery.caroline)
    built = await kit.memory.context.build(
        room=pottery.room, user=pottery.caroline, query=question.content, before_seq=question.seq
    )
    recalled = built.parts.recalled
    assert len(recalled) == 6
    assert pottery.said[recalled[0].first_seq] == first
    assert built.stats["named_speaker"] is (per_other > 0)
