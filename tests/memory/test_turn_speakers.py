"""Speaker-aware recall over raw turns (both backends): a turn's vector is of "Speaker: words",
the full-text query leaves the room's speakers' names out, and only the best hits come with
their neighbours."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.embed.base import Kind
from eko.memory.speakers import room_speakers
from eko.memory.turn_index import COLLECTION
from eko.memory.turn_recall import recall_turns, render_recalled
from eko.store.message_search import query_words, search_messages
from eko.store.models import Embedding

from .conftest import MemoryKit, make_kit

# One axis per person and one per topic: a question naming Bob is nearest to Bob's turns only
# when the turn's vector carries its speaker.
MINUTE = timedelta(minutes=1)
HEAD = 400  # EKO_MEMORY_INDEX_PREVIOUS_CHARS when a turn's vector carries the turn before
AXES = {"alice": 0, "bob": 1, "paint": 2, "paints": 2, "painting": 2, "garden": 3}


class SpeakerEmbedder:
    name = "speakers-8"
    dim = 8
    calibrated_threshold = 0.9

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        self.texts.extend(texts)
        rows = np.full((len(texts), 8), 0.01, dtype=np.float32)
        for row, text in zip(rows, texts, strict=True):
            for word in text.lower().replace("?", " ").replace(":", " ").split():
                if word in AXES:
                    row[AXES[word]] += 1.0
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


async def stored_turn_texts(session: AsyncSession) -> set[str]:
    """The texts the turn vectors were embedded from."""
    rows = await session.execute(select(Embedding.text).where(Embedding.collection == COLLECTION))
    return set(rows.scalars())


def test_query_words_leave_the_ignored_words_out() -> None:
    assert query_words("What did Caroline research?") == ["caroline", "research"]
    assert query_words("What did Caroline research?", {"caroline"}) == ["research"]
    # Accents folded on both sides: the ignored words are spelled as query_words spells them.
    assert query_words("Qu'a dit Hélène du voyage ?", set(query_words("Hélène"))) == [
        "dit",
        "voyage",
    ]


async def test_speaker_words_are_the_members_and_the_assistant(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory()
    alice, bob, stranger = (
        await kit.user("Alice Martin"),
        await kit.user("Bob"),
        await kit.user("Zoé"),
    )
    room = await kit.room(alice, kind="lobby", members=[bob])
    async with kit.database.session() as session:
        speakers = await room_speakers(session, room_id=room.id, assistant_name="Eko")
    words = speakers.words()
    assert words == {"alice", "martin", "bob", "eko"}  # not a stranger to the room
    assert stranger.display_name.lower() not in words


async def test_a_turn_is_embedded_with_its_speaker_and_found_by_who_said_it(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    embedder = SpeakerEmbedder()
    kit = make_kit(kit_factory().database, recent_turns=1, lobby_recent_turns=1, embedder=embedder)
    alice, bob = await kit.user("Alice"), await kit.user("Bob")
    room = await kit.room(alice, kind="lobby", members=[bob])
    # Days apart, so each turn's vector is of that turn alone (no turn before it in the sitting).
    day = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
    await kit.say(room, "I paint on Sundays.", user=alice, created_at=day)
    await kit.say(room, "I paint on Sundays.", user=bob, created_at=day + timedelta(days=1))
    await kit.say(
        room, "Both of you, how nice.", role="assistant", created_at=day + timedelta(days=2)
    )
    for i in range(3):
        await kit.say(room, f"Small talk {i}.", user=alice)
    current = await kit.say(room, "When does Bob paint?", user=alice)
    built = await kit.memory.context.build(
        room=room, user=alice, query=current.content, before_seq=current.seq
    )
    async with kit.database.session() as session:
        stored = await stored_turn_texts(session)
    assert {"Alice: I paint on Sundays.", "Bob: I paint on Sundays."} <= stored
    assert "Eko: Both of you, how nice." in stored
    # The same words from two people: the one the question names comes first.
    first = built.parts.recalled[0]
    assert first.first_seq <= 2 <= first.last_seq
    best = sorted(built.parts.recalled, key=lambda turn: -turn.rank)[0]
    assert "Bob: I paint on Sundays." in best.text


async def test_the_full_text_query_leaves_the_speakers_names_out(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory()
    caroline, melanie = await kit.user("Caroline"), await kit.user("Melanie")
    room = await kit.room(caroline, kind="lobby", members=[melanie])
    greeting = await kit.say(room, "Hey Caroline, good to see you!", user=melanie)
    answer = await kit.say(room, "I researched adoption agencies.", user=caroline)
    async with kit.database.session() as session:
        speakers = await room_speakers(session, room_id=room.id, assistant_name="Eko")
        ignore = speakers.words()
        with_names = await search_messages(
            session,
            dialect=kit.database.dialect,
            room_id=room.id,
            query="What did Caroline research?",
            limit=5,
        )
        without = await search_messages(
            session,
            dialect=kit.database.dialect,
            room_id=room.id,
            query="What did Caroline research?",
            limit=5,
            ignore=ignore,
        )
    assert greeting.seq in {hit.seq for hit in with_names}  # the name matched a greeting
    assert [hit.seq for hit in without] == [answer.seq]


async def test_only_the_best_hits_come_with_their_neighbours(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = kit_factory()
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    for topic in ("garden roses", "garden tomatoes", "garden shed"):
        await kit.say(room, f"Filler before {topic.split()[1]}.", user=alice)
        await kit.say(room, f"My {topic} are fine.", user=alice)
        await kit.say(room, f"Filler after {topic.split()[1]}.", user=alice)
    async with kit.database.session() as session:
        recalled = await recall_turns(
            session,
            dialect=kit.database.dialect,
            room_id=room.id,
            query="garden",
            before_seq=None,
            max_chars=5000,
            assistant_name="Eko",
            neighbours=1,
            neighbours_head=1,
        )
    assert len(recalled) == 3
    with_neighbours = [turn for turn in recalled if turn.last_seq > turn.first_seq]
    assert len(with_neighbours) == 1  # the best hit with the turn before and after it
    assert with_neighbours[0].last_seq - with_neighbours[0].first_seq == 2
    alone = [turn for turn in recalled if turn.first_seq == turn.last_seq]
    assert len(alone) == 2 and all("Filler" not in turn.text for turn in alone)
    assert render_recalled(recalled).count("Filler") == 2


async def test_a_reply_is_embedded_after_what_it_answers_within_one_sitting(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    embedder = SpeakerEmbedder()
    kit = make_kit(
        kit_factory().database,
        recent_turns=1,
        lobby_recent_turns=1,
        embedder=embedder,
        memory_index_previous_chars=HEAD,
    )
    alice, bob = await kit.user("Alice"), await kit.user("Bob")
    room = await kit.room(alice, kind="lobby", members=[bob])
    start = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
    await kit.say(room, "Do you still paint?", user=alice, created_at=start)
    reply = await kit.say(room, "Yes, every weekend!", user=bob, created_at=start + MINUTE)
    await kit.say(room, "Long " + "story " * 200, user=alice, created_at=start + 2 * MINUTE)
    await kit.say(room, "Sure.", user=bob, created_at=start + 3 * MINUTE)
    await kit.say(room, "Back from holidays.", user=bob, created_at=start + timedelta(days=3))
    async with kit.database.session() as session:
        await kit.memory.context.turns.reindex(session, room_id=room.id)
        await session.commit()
        stored = await stored_turn_texts(session)
        # "Yes, every weekend!" shares no word with the question; what it answers does.
        question = (await embedder.embed(["Does Bob still paint?"]))[0]
        [hits] = await kit.memory.context.turns.search(
            session, room_id=room.id, vectors=[question], before_seq=None, k=1
        )
    assert "Alice: Do you still paint?" in stored  # the first turn: nothing before it
    assert "Alice: Do you still paint?\nBob: Yes, every weekend!" in stored
    # Only the head of a long turn goes before the next one.
    assert f"{('Alice: Long ' + 'story ' * 200)[:HEAD]}\nBob: Sure." in stored
    # Three days later is another sitting: the turn stands alone.
    assert "Bob: Back from holidays." in stored
    assert [hit.message_id for hit in hits] == [reply.id]


async def test_with_no_previous_chars_a_turn_is_embedded_alone(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    """EKO_MEMORY_INDEX_PREVIOUS_CHARS = 0: the embedder's cost is per token, and the turn
    before doubled it (docs/benchmarks.md, "Import and reindex")."""
    kit = make_kit(
        kit_factory().database, embedder=SpeakerEmbedder(), memory_index_previous_chars=0
    )
    assert kit.settings.memory_index_previous_chars == 0
    alice, bob = await kit.user("Alice"), await kit.user("Bob")
    room = await kit.room(alice, kind="lobby", members=[bob])
    start = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
    await kit.say(room, "Do you still paint?", user=alice, created_at=start)
    await kit.say(room, "Yes, every weekend!", user=bob, created_at=start + MINUTE)
    async with kit.database.session() as session:
        await kit.memory.context.turns.reindex(session, room_id=room.id)
        await session.commit()
        stored = await stored_turn_texts(session)
    assert stored == {"Alice: Do you still paint?", "Bob: Yes, every weekend!"}
