"""An exact hit is served without embedding the question (issue 36 item 5: a hit through the API
fast): the exact key is read with the recent window, before any embedder call; a question that
is not stored exactly is still embedded once and looked up by meaning; and the cached exchange
still reaches the recall index (its after-reply job), so memory finds it later."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sqlalchemy import select

from eko.embed.base import Kind
from eko.embed.hashing import HashEmbedder
from eko.guard.scope import Scope
from eko.memory.turn_index import COLLECTION as TURNS
from eko.store.models import Embedding
from tests.api.conftest import HarnessFactory

QUESTION = "How do I export the team calendar to Outlook?"
ANSWER = "Open Settings, then Calendar, then Export to Outlook."
OTHER = "How do I import a calendar from Google into Eko?"


class CountingEmbedder(HashEmbedder):
    """A hash embedder that records every call: (kind, texts)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[Kind, tuple[str, ...]]] = []

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        self.calls.append((kind, tuple(texts)))
        return await super().embed(texts, kind=kind)


async def test_an_exact_hit_through_the_api_makes_no_embedder_call(
    make_harness: HarnessFactory,
) -> None:
    embedder = CountingEmbedder()
    # Jobs run only when drained: the recall index's embedding is not counted with the request.
    async with make_harness(embedder=embedder, jobs_worker_in_process=False) as h:
        await h.services.guard.learn(
            question=QUESTION, answer=ANSWER, scope=Scope(h.settings.default_persona)
        )
        _, headers = await h.user("alice")
        room = await h.direct_room(headers)
        embedder.calls.clear()

        hit = await h.client.post(
            f"/v1/rooms/{room}/messages", json={"content": QUESTION}, headers=headers
        )
        assert hit.status_code == 201, hit.text
        reply = hit.json()["assistant_message"]
        assert reply["type"] == "cached_response" and reply["content"] == ANSWER
        assert reply["metadata"]["memory_guard"]["match"] == "exact"
        assert embedder.calls == []

        # Not stored exactly: embedded once as a query, then looked up by meaning (a miss).
        miss = await h.client.post(
            f"/v1/rooms/{room}/messages", json={"content": OTHER}, headers=headers
        )
        assert miss.json()["assistant_message"]["type"] != "cached_response"
        assert [texts for kind, texts in embedder.calls if kind == "query"][:1] == [(OTHER,)]

        # The cached exchange is still indexed for recall by its after-reply job.
        await h.services.jobs.drain()
        ids = [hit.json()["user_message"]["id"], reply["id"]]
        async with h.services.database.session() as session:
            indexed = set(
                await session.scalars(
                    select(Embedding.item_id).where(
                        Embedding.collection == TURNS, Embedding.item_id.in_(ids)
                    )
                )
            )
        assert indexed == set(ids)


async def test_an_exact_hit_is_counted_and_a_retired_entry_is_not_served(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(jobs_worker_in_process=False) as h:
        learned = await h.services.guard.learn(
            question=QUESTION, answer=ANSWER, scope=Scope(h.settings.default_persona)
        )
        _, headers = await h.user("alice")
        room = await h.direct_room(headers)
        first = await h.client.post(
            f"/v1/rooms/{room}/messages", json={"content": QUESTION}, headers=headers
        )
        assert first.json()["assistant_message"]["type"] == "cached_response"
        entry = await h.services.guard.get(learned.entry.id)
        assert entry is not None and entry.usage_count == 2  # +2 for a strong hit (spec)

        await h.services.guard.mark_obsolete(learned.entry.id, reason="test", by="staff")
        again = await h.client.post(
            f"/v1/rooms/{room}/messages", json={"content": QUESTION}, headers=headers
        )
        assert again.json()["assistant_message"]["type"] != "cached_response"


async def test_a_cached_exchange_is_indexed_later_without_holding_back_the_room(
    make_harness: HarnessFactory,
) -> None:
    """The recall index of a cached exchange waits EKO_MEMORY_INDEX_CACHED_DELAY_S, takes no
    room lock (a waiting job would hold back every later job of the room), and a later
    exchange's own job, due at once, indexes the room's missing turns, the cached ones too."""
    embedder = CountingEmbedder()
    async with make_harness(
        embedder=embedder, jobs_worker_in_process=False, memory_index_cached_delay_s=3600
    ) as h:
        await h.services.guard.learn(
            question=QUESTION, answer=ANSWER, scope=Scope(h.settings.default_persona)
        )
        _, headers = await h.user("alice")
        room = await h.direct_room(headers)
        hit = (
            await h.client.post(
                f"/v1/rooms/{room}/messages", json={"content": QUESTION}, headers=headers
            )
        ).json()
        assert hit["assistant_message"]["type"] == "cached_response"
        ids = [hit["user_message"]["id"], hit["assistant_message"]["id"]]

        async def indexed() -> set[str]:
            async with h.services.database.session() as session:
                return set(
                    await session.scalars(
                        select(Embedding.item_id).where(
                            Embedding.collection == TURNS, Embedding.item_id.in_(ids)
                        )
                    )
                )

        await h.services.jobs.drain()
        assert await indexed() == set()  # not due for an hour
        waiting = [
            job
            for job in await h.services.jobs.list_jobs(status="queued", room_ids=[room])
            if job.name == "after_reply.memory.turn_index"
        ]
        assert len(waiting) == 1 and waiting[0].lock is None, waiting
        assert waiting[0].run_at is not None

        # A model-answered message: its jobs run at once, its recall index takes the room's
        # missing turns along, the cached exchange's included.
        miss = await h.client.post(
            f"/v1/rooms/{room}/messages", json={"content": OTHER}, headers=headers
        )
        assert miss.json()["assistant_message"]["type"] != "cached_response"
        await h.services.jobs.drain()
        assert await indexed() == set(ids)
