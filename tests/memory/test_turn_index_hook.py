"""Turns are indexed as messages arrive (the after-reply job), not on the request path."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import select

from eko.memory.turn_index import COLLECTION
from eko.memory.turn_indexer import TurnIndexHook
from eko.store.models import Embedding, Message, Room, User
from tests.api.conftest import HarnessFactory

from .conftest import MemoryKit, make_kit
from .test_turn_index import ConceptEmbedder as _Concepts


class ConceptEmbedder(_Concepts):
    dim = 8


@dataclass
class Exchange:
    user: User
    room: Room
    user_message: Message


async def _exchange(
    kit: MemoryKit, hook: TurnIndexHook, room: Room, user: User, said: str, answer: str
) -> None:
    """A message and its reply, then the after-reply job, as the chat path runs them."""
    message = await kit.say(room, said, user=user)
    reply = await kit.say(room, answer, role="assistant")
    await hook.after(Exchange(user, room, message), reply)


def _turn_hook(kit: MemoryKit) -> TurnIndexHook:
    hooks = [h for h in kit.memory.after_reply_hooks() if isinstance(h, TurnIndexHook)]
    assert len(hooks) == 1
    return hooks[0]


async def test_a_new_message_is_found_by_meaning_with_no_catch_up_on_the_request_path(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    embedder = ConceptEmbedder()
    kit = make_kit(
        kit_factory().database, recent_turns=2, embedder=embedder, memory_recall_catch_up=0
    )
    hook = _turn_hook(kit)
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    await _exchange(kit, hook, room, alice, "On Sundays I do watercolours by the lake.", "Nice.")
    for i in range(4):
        await _exchange(kit, hook, room, alice, f"Small talk number {i}.", f"Reply {i}.")
    async with kit.database.session() as session:
        indexed = await session.scalar(
            select(Embedding.id)
            .join(Message, Message.id == Embedding.item_id)
            .where(Embedding.collection == COLLECTION, Message.seq == 1)
        )
    assert indexed is not None  # the first turn has its vector, with no read of the room

    current = await kit.say(room, "What is my hobby again?", user=alice)
    embedder.calls.clear()
    built = await kit.memory.context.build(
        room=room, user=alice, query=current.content, before_seq=current.seq
    )
    assert "watercolours by the lake" in built.text  # no word shared: found by its meaning
    assert "turns_indexed" not in built.stats  # nothing embedded while answering
    assert embedder.calls == [1]  # the question's vector only


async def test_the_request_path_only_catches_up_what_the_job_missed_older_than_the_window(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = make_kit(kit_factory().database, recent_turns=2, embedder=ConceptEmbedder())
    hook = _turn_hook(kit)
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    # A lost job: this exchange is stored but never indexed.
    await kit.say(room, "On Sundays I do watercolours by the lake.", user=alice)
    await kit.say(room, "Nice.", role="assistant")
    for i in range(3):
        await _exchange(kit, hook, room, alice, f"Small talk number {i}.", f"Reply {i}.")
    current = await kit.say(room, "What is my hobby again?", user=alice)
    built = await kit.memory.context.build(
        room=room, user=alice, query=current.content, before_seq=current.seq
    )
    assert built.stats["turns_indexed"] == 0  # the job's own catch-up took the lost exchange
    assert "watercolours by the lake" in built.text

    # With no job at all, the read indexes what its search can return, never the question.
    other = await kit.room(alice)
    await kit.say(other, "My job: I am a nurse.", user=alice)
    for i in range(3):
        await kit.say(other, f"Small talk number {i}.", user=alice)
        await kit.say(other, f"Reply {i}.", role="assistant")
    asked = await kit.say(other, "What is my job?", user=alice)
    built = await kit.memory.context.build(
        room=other, user=alice, query=asked.content, before_seq=asked.seq
    )
    assert built.stats["turns_indexed"] == 3  # seq 1-3: older than the 2-turn window (4-7)
    assert "I am a nurse" in built.text


async def test_no_turn_job_when_dense_recall_is_off(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    kit = make_kit(kit_factory().database, memory_recall_dense_k=0)
    assert not [h for h in kit.memory.after_reply_hooks() if isinstance(h, TurnIndexHook)]


async def test_a_posted_message_and_its_reply_get_their_vectors_from_the_job(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        _, alice = await h.user("alice")
        room = await h.direct_room(alice)
        posted = await h.client.post(
            f"/v1/rooms/{room}/messages", json={"content": "I paint on Sundays."}, headers=alice
        )
        assert posted.status_code == 201
        ids = {posted.json()["user_message"]["id"], posted.json()["assistant_message"]["id"]}
        async with h.services.database.session() as session:
            before = set(
                await session.scalars(
                    select(Embedding.item_id).where(Embedding.collection == COLLECTION)
                )
            )
        await h.services.jobs.drain()
        async with h.services.database.session() as session:
            after = set(
                await session.scalars(
                    select(Embedding.item_id).where(Embedding.collection == COLLECTION)
                )
            )
    assert not ids & before  # not on the request path (no earlier turn to search)
    assert ids <= after
