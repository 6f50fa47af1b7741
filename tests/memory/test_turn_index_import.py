"""A long unindexed history (an import) and a question right after it: the context build's
catch-up is bounded in time and skipped while the room is being indexed, and the turn that
answers is still recalled (by its words); the indexing job's own pass indexes everything,
batch by batch, with progress (both backends; a slow embedder stands in for the bundled one).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import numpy as np

from eko.embed.base import Kind
from eko.embed.hashing import HashEmbedder
from eko.memory.turn_indexer import lock_key
from eko.store import messages as message_repo
from eko.store.models import Room, User

from .conftest import MemoryKit, make_kit

TURNS = 300
SECRET = "quibbleworth"
PER_TEXT_S = 0.02


class SlowEmbedder:
    """The hash embedder at PER_TEXT_S per passage: 64 turns take 1.3 s."""

    calibrated_threshold = 0.9

    def __init__(self) -> None:
        self._inner = HashEmbedder()
        self.name = self._inner.name
        self.dim = self._inner.dim
        self.passages = 0
        self.calls: list[int] = []

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        if kind == "passage":
            self.passages += len(texts)
            self.calls.append(len(texts))
            await asyncio.sleep(PER_TEXT_S * len(texts))
        return await self._inner.embed(texts, kind=kind)


async def _imported(kit: MemoryKit) -> tuple[User, Room, int]:
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    rows = [
        message_repo.NewMessage(
            role="user" if i % 2 == 0 else "assistant",
            content=(
                f"My boat is called the {SECRET}."
                if i == 40
                else f"Turn {i} about the weather and nothing much."
            ),
            dedupe_key=f"import:{i}",
            sender_id=alice.id if i % 2 == 0 else None,
        )
        for i in range(TURNS)
    ]
    await message_repo.append_many(kit.database, room_id=room.id, messages=rows)
    question = await kit.say(room, f"What is the {SECRET}?", user=alice)
    return alice, room, question.seq


async def test_a_question_after_an_import_waits_a_bounded_time_for_embedding(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    embedder = SlowEmbedder()
    base = kit_factory()
    kit = make_kit(base.database, embedder=embedder, memory_recall_catch_up_s=0.2)
    alice, room, seq = await _imported(kit)

    built = await kit.memory.context.build(
        room=room, user=alice, query=f"What is the {SECRET}?", before_seq=seq
    )
    # The old catch-up embedded its 64 turns whatever they cost (1.3 s here); the bounded
    # one stops when its time is up, so fewer turns were embedded on the request path.
    assert embedder.passages < 64
    assert embedder.passages == built.stats["turns_indexed"] > 0
    assert f"My boat is called the {SECRET}." in built.text


async def test_no_catch_up_while_the_room_is_being_indexed(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    embedder = SlowEmbedder()
    base = kit_factory()
    kit = make_kit(base.database, embedder=embedder)
    alice, room, seq = await _imported(kit)
    async with kit.database.keyed_locks.hold(lock_key(room.id)):  # the import's job, here
        built = await asyncio.wait_for(
            kit.memory.context.build(
                room=room, user=alice, query=f"What is the {SECRET}?", before_seq=seq
            ),
            timeout=5,
        )
    assert embedder.passages == 0
    assert f"My boat is called the {SECRET}." in built.text


async def test_the_indexing_pass_embeds_every_turn_in_batches_with_progress(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    embedder = SlowEmbedder()
    base = kit_factory()
    kit = make_kit(base.database, embedder=embedder)
    _, room, _ = await _imported(kit)
    seen: list[tuple[int, int]] = []

    async def progress(done: int, total: int) -> None:
        seen.append((done, total))

    index = kit.memory.context.indexer
    async with kit.database.session() as session:
        indexed = await index.index_missing(session, room_id=room.id, batch=50, progress=progress)
    assert indexed == TURNS + 1
    assert embedder.calls == [50] * 6 + [1]
    assert seen[0] == (0, TURNS + 1) and seen[-1] == (TURNS + 1, TURNS + 1)
    assert len(seen) == 8
    # Nothing left: a second pass embeds nothing.
    async with kit.database.session() as session:
        assert await index.index_missing(session, room_id=room.id) == 0
    assert embedder.passages == TURNS + 1
