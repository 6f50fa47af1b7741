"""A hit costs nothing: a cached answer makes no model call, on the request path or in its
background work (memory extraction, summaries); and a statement, a greeting or a thanks never
gets a cached answer, even from an entry holding that very text."""

from __future__ import annotations

from eko.guard.hit_cost import exchange_model_calls
from eko.guard.learn import NotLearnable
from eko.guard.normalize import key_hash
from eko.guard.scope import Scope
from eko.guard.service import COLLECTION
from eko.llm.providers import FunctionModel
from eko.store.guard_models import GuardEntry
from eko.store.models import utcnow
from tests.api.conftest import HarnessFactory
from tests.guard.conftest import GuardFactory

QUESTION = "How do I export the team calendar to Outlook?"


async def test_a_served_hit_makes_no_model_call_even_with_extraction_on(
    make_harness: HarnessFactory,
) -> None:
    model = FunctionModel.constant("Open Settings, then Export.")  # not JSON: extraction retries
    async with make_harness(providers=[model], memory_extract_enabled=True) as h:
        _, headers = await h.user("alice")
        room = await h.direct_room(headers)
        first = (
            await h.client.post(
                f"/v1/rooms/{room}/messages", json={"content": QUESTION}, headers=headers
            )
        ).json()
        reply_id = first["assistant_message"]["id"]
        verdict = await h.client.post(
            f"/v1/messages/{reply_id}/feedback", json={"rating": "up"}, headers=headers
        )
        assert verdict.json()["learned"] is True
        await h.services.jobs.drain()
        database = h.services.database
        # The model-answered exchange: the answer, then extraction in the background.
        answered = await exchange_model_calls(database, user_message_id=first["user_message"]["id"])
        assert answered >= 2
        before = len(model.requests)

        again = (
            await h.client.post(
                f"/v1/rooms/{room}/messages", json={"content": QUESTION}, headers=headers
            )
        ).json()
        assert again["assistant_message"]["type"] == "cached_response"
        await h.services.jobs.drain()
        assert len(model.requests) == before
        hit = again["user_message"]["id"]
        assert await exchange_model_calls(database, user_message_id=hit) == 0


async def test_statements_are_never_learned_nor_served(make_guard: GuardFactory) -> None:
    guard = make_guard()
    scope = Scope("eko")
    for text in ("merci !", "je pars à Lyon demain", "I'm going to Lyon tomorrow"):
        try:
            await guard.learn(question=text, answer="De rien.", scope=scope)
        except NotLearnable as exc:
            assert exc.reason == "not_a_question"
        else:
            raise AssertionError(f"{text!r} was learned")
    # An entry holding a statement (stored before this rule): never served, not even exactly.
    statement = "je pars à Lyon demain"
    entries = guard._entries
    async with entries.database.session() as session:
        entry = GuardEntry(
            scope=scope.key,
            key_hash=key_hash(scope.key, statement),
            question=statement,
            answer="Bon voyage !",
            meta={},
            status="active",
            usage_count=0,
            created_at=utcnow(),
        )
        session.add(entry)
        await session.flush()
        vector = (await guard._embedder.embed([statement]))[0]
        await entries.vectors.upsert(
            session,
            collection=COLLECTION,
            item_id=entry.id,
            key=scope.key,
            text=statement,
            vector=vector,
            model=guard.embedder_name,
        )
    found = await guard.lookup(statement, [scope])
    assert found.hit is None and found.refused == "not_a_question"
    assert (await guard.lookup("Merci !", [scope])).hit is None
