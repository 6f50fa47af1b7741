"""An acknowledged message is always answered, exactly once, with its background work queued.

The user message and the record that it is owed an answer are one transaction (the answer
outbox); the reply, the end of that debt and the reply's after-reply jobs are another. What a
dead process left owed is claimed by another process's recovery loop once its lease runs out.
Both backends; `eko bench crash` does the same with `kill -9` on real processes.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import TimeoutError as PoolTimeout

from eko.chat.pipeline import Draft, Turn
from eko.chat.recovery import AnswerRecovery
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.store.models import Message, utcnow
from eko.store.outbox_models import AnswerOutbox
from eko.wiring import Services
from tests.api.conftest import Harness, HarnessFactory


def blocked_model() -> tuple[FunctionModel, asyncio.Event]:
    """A model that is called and never answers: the process 'dies' while it waits."""
    called = asyncio.Event()

    async def answer(_request: ProviderRequest) -> str:
        called.set()
        await asyncio.Event().wait()
        return "never"

    return FunctionModel(answer, name="blocked"), called


def kill_answers() -> None:
    """What `kill -9` does to this process's answers: they stop, nothing is cleaned up."""
    for task in asyncio.all_tasks():
        if task.get_name().startswith(("post:", "answer")):
            task.cancel()


async def owed(services: Services) -> list[AnswerOutbox]:
    async with services.database.session() as session:
        return list((await session.execute(select(AnswerOutbox))).scalars())


async def replies_to(services: Services, message_id: str) -> list[Message]:
    async with services.database.session() as session:
        return list(
            (
                await session.execute(
                    select(Message).where(
                        Message.reply_to_id == message_id, Message.role == "assistant"
                    )
                )
            ).scalars()
        )


async def jobs_for(services: Services, reply_id: str) -> list[str]:
    """The reply's jobs, whatever their state, on either jobs backend."""
    jobs = await services.jobs.list_jobs(limit=1000)
    return sorted(job.name for job in jobs if job.args.get("reply_id") == reply_id)


async def leases_run_out(services: Services) -> None:
    """Time passes: every lease on the outbox has run out."""
    async with services.database.session() as session:
        await session.execute(
            update(AnswerOutbox).values(claimed_until=utcnow() - timedelta(seconds=1))
        )


async def post(h: Harness, headers: dict[str, str], room_id: str, text: str) -> Any:
    return await h.client.post(
        f"/v1/rooms/{room_id}/messages", json={"content": text}, headers=headers
    )


async def test_a_message_left_unanswered_by_a_dead_process_is_answered_once_by_another(
    make_harness: HarnessFactory,
) -> None:
    model, called = blocked_model()
    async with make_harness(providers=[model]) as dead:
        _, headers = await dead.user()
        room_id = await dead.direct_room(headers)
        request = asyncio.create_task(post(dead, headers, room_id, "Quelle heure est-il ?"))
        await asyncio.wait_for(called.wait(), 30)
        # Stored and owed before any answer: the row came with the message.
        [row] = await owed(dead.services)
        assert row.claimed_by == dead.services.chat.worker_id
        kill_answers()
        request.cancel()
        await asyncio.gather(request, return_exceptions=True)
        message_id = row.user_message_id
        assert await replies_to(dead.services, message_id) == []

    async with make_harness(providers=[FunctionModel.constant("Il est midi.")]) as alive:
        recovery = alive.services.recovery
        assert recovery is not None
        if alive.services.database.dialect == "postgresql":
            # Other servers may share this database: the dead process's lease is waited out.
            assert await recovery.claim_and_answer() == []
            await leases_run_out(alive.services)
        # On SQLite (one server per database) the restarted server takes over at once.
        assert await recovery.claim_and_answer() == [message_id]
        await recovery.settle()
        [reply] = await replies_to(alive.services, message_id)
        assert reply.content == "Il est midi."
        assert await owed(alive.services) == []
        # The reply's background work was queued with it.
        assert await jobs_for(alive.services, reply.id) != []
        # Nothing left to claim, and a second pass answers nothing twice.
        await leases_run_out(alive.services)
        assert await recovery.claim_and_answer() == []
        assert len(await replies_to(alive.services, message_id)) == 1


async def test_two_processes_claiming_at_once_answer_each_message_exactly_once(
    make_harness: HarnessFactory,
) -> None:
    model, called = blocked_model()
    async with make_harness(providers=[model]) as dead:
        _, headers = await dead.user()
        rooms = [await dead.direct_room(headers) for _ in range(6)]
        requests = [asyncio.create_task(post(dead, headers, r, "Bonjour ?")) for r in rooms]
        for _ in range(600):
            if len(await owed(dead.services)) == 6:
                break
            await asyncio.sleep(0.05)
        await asyncio.wait_for(called.wait(), 30)
        kill_answers()
        for request in requests:
            request.cancel()
        await asyncio.gather(*requests, return_exceptions=True)
        message_ids = sorted(row.user_message_id for row in await owed(dead.services))
        assert len(message_ids) == 6

    async with (
        make_harness(providers=[FunctionModel.constant("un")]) as first,
        make_harness(providers=[FunctionModel.constant("deux")]) as second,
    ):
        # Two server processes on one database (PostgreSQL's scale-out): leases are honoured.
        recoveries = [
            AnswerRecovery(h.services.database, h.services.chat, lease_s=30, poll_s=5)
            for h in (first, second)
        ]
        await leases_run_out(first.services)
        claims = await asyncio.gather(*(r.claim_and_answer() for r in recoveries))
        for recovery in recoveries:
            await recovery.settle()
        assert set(claims[0]).isdisjoint(claims[1])
        assert sorted(claims[0] + claims[1]) == message_ids
        for message_id in message_ids:
            assert len(await replies_to(first.services, message_id)) == 1
        assert await owed(first.services) == []


class DatabaseDown:
    """A stage before the model that needs the database (as the paywall does) while it is
    out of connections."""

    name = "database_down"

    def __init__(self) -> None:
        self.down = True
        self.calls = 0

    async def respond(self, turn: Turn) -> Draft | None:
        self.calls += 1
        if self.down:
            raise PoolTimeout("QueuePool limit reached, connection timed out")
        return None


async def test_a_database_outage_while_answering_stores_no_apology_and_the_answer_comes_later(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(
        providers=[FunctionModel.constant("La réponse.")], chat_answer_retry_s=0.05
    ) as h:
        outage = DatabaseDown()
        h.services.chat.short_circuits.insert(0, outage)
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        response = await post(h, headers, room_id, "Une question ?")
        # Stored, so never an error status: the answer is owed, not refused.
        assert response.status_code == 201, response.text
        body = response.json()
        assert body["answer_pending"] is True and body["assistant_message"] is None
        message_id = body["user_message"]["id"]
        assert outage.calls == 3  # the first try and two quick retries
        assert await replies_to(h.services, message_id) == []  # no canned apology stored
        [row] = await owed(h.services)
        assert row.claimed_by is None and "TimeoutError" in (row.last_error or "")

        outage.down = False
        recovery = h.services.recovery
        assert recovery is not None
        await asyncio.sleep(0.1)  # the retry delay passes
        assert await recovery.claim_and_answer() == [message_id]
        await recovery.settle()
        [reply] = await replies_to(h.services, message_id)
        assert reply.content == "La réponse."
        assert await owed(h.services) == []
        # The room shows the answer to whoever reads it.
        listed = await h.client.get(f"/v1/rooms/{room_id}/messages", headers=headers)
        assert [m["role"] for m in listed.json()["items"]] == ["user", "assistant"]


async def test_a_reply_is_stored_with_its_background_jobs_or_not_at_all(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(
        providers=[FunctionModel.constant("Réponse complète.")], chat_answer_retry_s=0.05
    ) as h:
        jobs = h.services.jobs
        real_enqueue_in = jobs.enqueue_in
        broken = True

        async def enqueue_in(*args: Any, **kwargs: Any) -> int:
            if broken:
                raise RuntimeError("the jobs table is broken")
            return await real_enqueue_in(*args, **kwargs)

        jobs.enqueue_in = enqueue_in  # type: ignore[method-assign]
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        response = await post(h, headers, room_id, "Une question ?")
        assert response.status_code == 201, response.text
        assert response.json()["answer_pending"] is True
        message_id = response.json()["user_message"]["id"]
        # The jobs could not be queued, so the reply was not stored either: still owed.
        assert await replies_to(h.services, message_id) == []
        assert [row.user_message_id for row in await owed(h.services)] == [message_id]

        broken = False
        await asyncio.sleep(0.1)
        recovery = h.services.recovery
        assert recovery is not None
        assert await recovery.claim_and_answer() == [message_id]
        await recovery.settle()
        [reply] = await replies_to(h.services, message_id)
        assert await jobs_for(h.services, reply.id) != []


async def test_messages_not_answered_now_are_not_owed(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        response = await h.client.post(
            f"/v1/rooms/{room_id}/messages?respond=false",
            json={"content": "je répondrai plus tard"},
            headers=headers,
        )
        assert response.status_code == 201
        assert await owed(h.services) == []
        answered = await post(h, headers, room_id, "et maintenant ?")
        assert answered.json()["assistant_message"] is not None
        async with h.services.database.session() as session:
            count = await session.scalar(select(func.count()).select_from(AnswerOutbox))
        assert count == 0


async def test_an_openai_client_gets_the_answer_written_after_an_outage_not_an_error(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(
        providers=[FunctionModel.constant("Réponse tardive.")], chat_answer_retry_s=0.05
    ) as h:
        outage = DatabaseDown()
        h.services.chat.short_circuits.insert(0, outage)
        _, headers = await h.user()
        recovery = h.services.recovery
        assert recovery is not None

        async def database_comes_back() -> None:
            for _ in range(1500):  # until the request gives the message back
                if [row for row in await owed(h.services) if row.claimed_by is None]:
                    break
                await asyncio.sleep(0.02)
            outage.down = False
            await asyncio.sleep(0.1)
            await recovery.claim_and_answer()
            await recovery.settle()

        comeback = asyncio.create_task(database_comes_back())
        response = await h.client.post(
            "/v1/chat/completions",
            json={"model": "eko", "messages": [{"role": "user", "content": "Alors ?"}]},
            headers=headers,
        )
        await comeback
        assert response.status_code == 200, response.text
        assert response.json()["choices"][0]["message"]["content"] == "Réponse tardive."
        assert await owed(h.services) == []


async def test_a_long_answer_keeps_its_lease_and_is_never_taken_by_another_process(
    make_harness: HarnessFactory,
) -> None:
    release = asyncio.Event()
    called = asyncio.Event()

    async def slow(_request: ProviderRequest) -> str:
        called.set()
        await release.wait()
        return "Enfin."

    lease_s = 3.0  # the shortest lease the settings allow
    async with (
        make_harness(
            providers=[FunctionModel(slow, name="slow")], chat_answer_lease_s=lease_s
        ) as busy,
        make_harness(providers=[FunctionModel.constant("volé")]) as other,
    ):
        mine = AnswerRecovery(
            busy.services.database, busy.services.chat, lease_s=lease_s, poll_s=0.1
        )
        theirs = AnswerRecovery(
            other.services.database, other.services.chat, lease_s=lease_s, poll_s=0.1
        )
        _, headers = await busy.user()
        room_id = await busy.direct_room(headers)
        request = asyncio.create_task(post(busy, headers, room_id, "Une longue question ?"))
        await asyncio.wait_for(called.wait(), 30)
        mine.start()  # renews the lease of the answer in progress
        try:
            for _ in range(6):  # well past the first lease
                await asyncio.sleep(lease_s / 3)
                assert await theirs.claim_and_answer() == []
        finally:
            release.set()
            response = await request
            await mine.aclose()
        assert response.json()["assistant_message"]["content"] == "Enfin."
        assert await owed(busy.services) == []


async def test_the_recovery_loop_answers_by_itself(make_harness: HarnessFactory) -> None:
    model, called = blocked_model()
    async with make_harness(providers=[model]) as dead:
        _, headers = await dead.user()
        room_id = await dead.direct_room(headers)
        request = asyncio.create_task(post(dead, headers, room_id, "Toujours là ?"))
        await asyncio.wait_for(called.wait(), 30)
        kill_answers()
        request.cancel()
        await asyncio.gather(request, return_exceptions=True)
        [row] = await owed(dead.services)

    async with make_harness(providers=[FunctionModel.constant("Oui.")]) as alive:
        await leases_run_out(alive.services)
        loop = AnswerRecovery(alive.services.database, alive.services.chat, lease_s=5, poll_s=0.1)
        loop.start()
        try:
            for _ in range(300):
                if await replies_to(alive.services, row.user_message_id):
                    break
                await asyncio.sleep(0.05)
        finally:
            await loop.aclose()
            await loop.settle()
        [reply] = await replies_to(alive.services, row.user_message_id)
        assert reply.content == "Oui."
