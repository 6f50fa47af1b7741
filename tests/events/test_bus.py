"""The bus itself: bounded per-subscriber queues, dropping slow subscribers, tokens, and
PostgreSQL LISTEN/NOTIFY between two buses (two processes)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from eko.events import tokens
from eko.events.access import EventAccess
from eko.events.local import InProcessBus
from eko.events.pg import MAX_PAYLOAD_BYTES, PgNotifyBus, fit_payload
from eko.events.stream import EventStream
from eko.events.types import Event
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database


async def test_a_slow_subscriber_is_dropped_with_a_notice_and_never_blocks_others() -> None:
    bus = InProcessBus()
    slow = await bus.subscribe(max_queue=2)
    fast = await bus.subscribe(max_queue=100)
    for n in range(5):  # returns at once although `slow` never reads
        await asyncio.wait_for(bus.publish(Event("test.event", "r", {"n": n})), 1)
    assert slow.dropped and bus.subscribers == 1
    assert [(await fast.get()).data["n"] for _ in range(5)] == [0, 1, 2, 3, 4]


async def test_an_event_stream_filters_by_room_membership(database: Database) -> None:
    async with database.session() as session:
        alice, _ = await user_repo.create_user(session, display_name="alice")
        bob, _ = await user_repo.create_user(session, display_name="bob")
        room = await room_repo.create_room(
            session, kind="direct", name="a", persona="eko", created_by=alice.id
        )
        await room_repo.add_member(session, room_id=room.id, user_id=alice.id)
    bus = InProcessBus()
    for_alice = EventStream(await bus.subscribe(max_queue=10), EventAccess(database, alice))
    for_bob = EventStream(await bus.subscribe(max_queue=10), EventAccess(database, bob))
    await bus.publish(Event("message.created", room.id, {"n": 1}))
    await bus.publish(Event("job.started", None, {"n": 2}))  # no room: staff only
    got = await for_alice.next(1)
    assert got is not None and got["data"] == {"n": 1}
    assert await for_alice.next(0.1) is None
    assert await for_bob.next(0.2) is None

    tiny = EventStream(await bus.subscribe(max_queue=1), EventAccess(database, alice))
    await bus.publish(Event("message.created", room.id, {"n": 3}))
    await bus.publish(Event("message.created", room.id, {"n": 4}))
    notice = await tiny.next(1)
    assert notice is not None and notice["type"] == "stream.dropped" and tiny.closed


async def test_browser_tokens_expire_and_cannot_be_forged(database: Database) -> None:
    async with database.session() as session:
        alice, _ = await user_repo.create_user(session, display_name="alice")
        token, expires = tokens.issue(alice, ttl_s=60, now=1_000_000)
        assert expires == 1_000_060
        assert (await tokens.verify(session, token, now=1_000_030)) is not None
        assert await tokens.verify(session, token, now=1_000_061) is None
        public_id, _exp, signature = token.split(".")
        assert await tokens.verify(session, f"{public_id}.9999999999.{signature}") is None
        assert await tokens.verify(session, "garbage") is None


def test_a_payload_too_large_for_notify_drops_the_message_text() -> None:
    event = Event(
        "message.created",
        "r",
        {"message_id": "m", "message": {"id": "m", "content": "x" * 20_000}},
    )
    payload = fit_payload(event)
    assert len(payload.encode()) <= MAX_PAYLOAD_BYTES
    decoded = Event.from_json(payload)
    assert decoded.data["truncated"] is True
    assert decoded.data["message"] == {"id": "m"}


async def test_listen_notify_carries_events_between_two_buses(
    database: Database, backend: str
) -> None:
    if backend != "postgres":
        pytest.skip("LISTEN/NOTIFY is PostgreSQL's")
    other_process = Database(database.url)
    publisher, listener = PgNotifyBus(other_process), PgNotifyBus(database)
    try:
        subscription = await listener.subscribe(max_queue=10)
        await publisher.publish(Event("message.created", "r1", {"n": 1}))
        event = await asyncio.wait_for(subscription.get(), 5)
        assert (event.type, event.room_id, event.data) == ("message.created", "r1", {"n": 1})
    finally:
        await publisher.aclose()
        await listener.aclose()
        await other_process.dispose()


async def test_a_listener_collected_unclosed_cancels_no_other_task(
    database: Database, backend: str
) -> None:
    if backend != "postgres":
        pytest.skip("LISTEN/NOTIFY is PostgreSQL's")
    bus = PgNotifyBus(database)
    listening = asyncio.create_task(bus._listen())
    try:
        await asyncio.wait_for(bus._listening.wait(), 10)
        # What the garbage collector does to a pending task nothing refers to any more. An
        # await while closing (asyncpg's close runs under asyncio.timeout) raised
        # "coroutine ignored GeneratorExit" and armed a timer that cancelled whichever task
        # was running (here, this test) two seconds later.
        listening.get_coro().close()
        await asyncio.sleep(2.5)
        assert not bus._listening.is_set()
    finally:
        bus._closing = True
        listening.cancel()
        with contextlib.suppress(BaseException):
            await listening
