"""Turns by meaning: the room's messages as vectors, fused with the full-text matches by
reciprocal rank (both backends; a concept embedder stands in for meaning)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from sqlalchemy import event

from eko.embed.base import Kind
from eko.memory.turn_index import COLLECTION
from eko.memory.turn_recall import fuse_by_rank
from eko.store.models import Embedding, Message, Room, User

from .conftest import MemoryKit, make_kit

# Words that mean the same thing share an axis: "painting" answers "hobby" with no shared word.
CONCEPTS = {
    "hobby": 0,
    "painting": 0,
    "paints": 0,
    "watercolours": 0,
    "job": 1,
    "nurse": 1,
    "weather": 2,
    "rain": 2,
}


class ConceptEmbedder:
    name = "concepts-8"
    dim = 8
    calibrated_threshold = 0.9

    def __init__(self) -> None:
        self.calls: list[int] = []

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        self.calls.append(len(texts))
        rows = np.full((len(texts), 8), 0.01, dtype=np.float32)
        for row, text in zip(rows, texts, strict=True):
            for word in text.lower().replace("?", " ").replace(".", " ").split():
                if word in CONCEPTS:
                    row[CONCEPTS[word]] += 1.0
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_reciprocal_rank_fusion_puts_a_turn_found_both_ways_first() -> None:
    fused = fuse_by_rank([5, 9, 2], [7, 9])
    assert [r.seq for r in fused][:1] == [9]  # 2nd in both beats 1st in one
    assert {r.seq for r in fused} == {2, 5, 7, 9}
    assert fuse_by_rank([], []) == []
    # Repeats within one ranking count once.
    assert fuse_by_rank([4, 4]) == fuse_by_rank([4])


async def _talk(kit: MemoryKit) -> tuple[User, Room, Message]:
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    await kit.say(room, "On Sundays I do watercolours by the lake.", user=alice)
    await kit.say(room, "Lovely.", role="assistant")
    for i in range(6):
        await kit.say(room, f"Small talk number {i}.", user=alice)
        await kit.say(room, f"Reply {i}.", role="assistant")
    current = await kit.say(room, "What is my hobby again?", user=alice)
    return alice, room, current


async def test_a_turn_with_no_shared_word_is_recalled_by_meaning(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    words_only = kit_factory(recent_turns=2, memory_recall_dense_k=0)
    alice, room, current = await _talk(words_only)
    embedder = ConceptEmbedder()
    # A generous catch-up bound: this is about recall by meaning, and a loaded machine can
    # take more than the default second to embed the room's ten turns on the request path.
    kit = make_kit(
        words_only.database, recent_turns=2, embedder=embedder, memory_recall_catch_up_s=30
    )

    before = await words_only.memory.context.build(
        room=room, user=alice, query=current.content, before_seq=current.seq
    )
    after = await kit.memory.context.build(
        room=room, user=alice, query=current.content, before_seq=current.seq
    )

    assert "watercolours" not in before.text  # no word in common: full text alone misses it
    assert "watercolours by the lake" in after.text
    assert after.parts.recalled[0].first_seq == 1  # the best fused match comes first
    # Every message the search can return (older than the 2-turn recent window; the window
    # and the question are the after-reply job's), and it ...
    assert after.stats["turns_indexed"] == 10
    again = await kit.memory.context.build(
        room=room, user=alice, query=current.content, before_seq=current.seq
    )
    assert again.stats["turns_indexed"] == 0  # ... only once
    assert "watercolours by the lake" in again.text


def _catch_up_kit(
    kit_factory: Callable[..., MemoryKit], embedder: ConceptEmbedder, *, catch_up: int
) -> MemoryKit:
    """A kit with a 2-turn recent window whose context builds catch up `catch_up` turns. The
    count is what these tests bound; the time bound (1 s by default) ran out before the first
    batch once on a loaded CI run (0 indexed)."""
    return make_kit(
        kit_factory(recent_turns=2).database,
        recent_turns=2,
        embedder=embedder,
        memory_recall_catch_up=catch_up,
        memory_recall_catch_up_s=60,
    )


async def test_reindex_embeds_a_whole_history_with_progress_and_catch_up_is_bounded(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    embedder = ConceptEmbedder()
    kit = _catch_up_kit(kit_factory, embedder, catch_up=4)
    alice, room, current = await _talk(kit)
    built = await kit.memory.context.build(
        room=room, user=alice, query=current.content, before_seq=current.seq
    )
    # Only the newest 4 messages older than the recent window are looked at while reading: the
    # old turn is not indexed yet.
    assert built.stats["turns_indexed"] == 4
    assert "watercolours" not in built.text

    seen: list[tuple[int, int]] = []
    index = kit.memory.context.turns
    async with kit.database.session() as session:
        done = await index.reindex(
            session, room_id=room.id, progress=lambda d, t: seen.append((d, t))
        )
        assert await index.rooms(session) == [room.id]
    assert done == 15  # every user and assistant message
    assert seen[-1] == (15, 15)
    async with kit.database.session() as session:
        rows = (
            await session.execute(
                Embedding.__table__.select().where(Embedding.collection == COLLECTION)
            )
        ).all()
    assert len(rows) == 15  # replaced, not duplicated
    rebuilt = await kit.memory.context.build(
        room=room, user=alice, query=current.content, before_seq=current.seq
    )
    assert "watercolours by the lake" in rebuilt.text


@contextmanager
def _statements(kit: MemoryKit) -> Iterator[list[str]]:
    """The SQL statements run on the kit's database inside the block."""
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        seen.append(statement)

    engine = kit.database.engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


async def test_the_catch_up_looks_again_only_at_the_turns_since_its_last_look(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    """A context build's catch-up probes the newest turns' vectors once; the next message's
    looks only at the turns that came since (a turn missed by its job is still caught)."""
    embedder = ConceptEmbedder()
    kit = _catch_up_kit(kit_factory, embedder, catch_up=64)
    alice, room, current = await _talk(kit)
    first = await kit.memory.context.build(
        room=room, user=alice, query=current.content, before_seq=current.seq
    )
    assert first.stats["turns_indexed"] == 10  # everything older than the 2-turn window
    # Nothing came since: the same look again probes no vector and embeds nothing.
    calls = len(embedder.calls)
    with _statements(kit) as statements:
        again = await kit.memory.context.build(
            room=room, user=alice, query=current.content, before_seq=current.seq
        )
    assert again.stats["turns_indexed"] == 0 and len(embedder.calls) == calls + 1  # the query
    assert statements and not [s for s in statements if "embeddings.model" in s], statements
    # Two exchanges later, their turns (no job ran here) are the ones caught up, and recalled.
    await kit.say(room, "Lovely question.", role="assistant")
    await kit.say(room, "I also paint portraits of my cat.", user=alice)
    await kit.say(room, "Nice.", role="assistant")
    for i in range(2):
        await kit.say(room, f"More talk {i}.", user=alice)
        await kit.say(room, f"Sure {i}.", role="assistant")
    later = await kit.say(room, "Which hobby did I mention last?", user=alice)
    built = await kit.memory.context.build(
        room=room, user=alice, query=later.content, before_seq=later.seq
    )
    # Seqs 11-18: the old window (11-14, never indexed), the first question and the turns since.
    assert built.stats["turns_indexed"] == 8
    assert "portraits of my cat" in built.text
    # The exchange's job looks at the room's newest turns: the next build's catch-up starts
    # after them, so it runs no statement at all.
    async with kit.database.session() as session:
        assert await kit.memory.context.indexer.catch_up(session, room_id=room.id) == 5
    following = await kit.say(room, "And my job?", user=alice)
    with _statements(kit) as statements:
        last = await kit.memory.context.build(
            room=room, user=alice, query=following.content, before_seq=following.seq
        )
    assert last.stats["turns_indexed"] == 0
    assert not [s for s in statements if "embeddings.model" in s], statements


async def test_an_embedder_failure_leaves_the_words_recall_working(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    class Broken(ConceptEmbedder):
        async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
            if kind == "passage":
                from eko.embed.base import EmbeddingError

                raise EmbeddingError("down")
            return await super().embed(texts, kind=kind)

    kit = make_kit(kit_factory().database, recent_turns=2, embedder=Broken())
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    await kit.say(room, "My nurse shifts start at six.", user=alice)
    await kit.say(room, "Early!", role="assistant")
    for i in range(4):
        await kit.say(room, f"Small talk number {i}.", user=alice)
        await kit.say(room, f"Reply {i}.", role="assistant")
    current = await kit.say(room, "When do my nurse shifts start?", user=alice)
    built = await kit.memory.context.build(
        room=room, user=alice, query=current.content, before_seq=current.seq
    )
    assert "turn_index_error" in built.stats
    assert "shifts start at six" in built.text  # found by its words
