"""Staff routes of the memory guard: list / search / view / create / validate / obsolete /
delete / prune — staff only, bad input refused with nothing stored."""

from __future__ import annotations

from tests.api.conftest import HarnessFactory
from tests.guard.conftest import age_entry
from tests.guard.test_api import (
    QUESTION,
    ask,
    counting_model,
    entries,
    restore_writer,
    use_writer,
)

ROUTES = [
    ("GET", "/v1/staff/memory", None),
    ("POST", "/v1/staff/memory", {"question": "q", "answer": "a"}),
    ("POST", "/v1/staff/memory/search", {"question": "q"}),
    ("POST", "/v1/staff/memory/validate", {"message_id": "x"}),
    ("POST", "/v1/staff/memory/prune", None),
    ("GET", "/v1/staff/memory/x", None),
    ("POST", "/v1/staff/memory/x/obsolete", None),
    ("DELETE", "/v1/staff/memory/x", None),
]


async def test_staff_routes_refuse_members_and_anonymous(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, headers = await h.user("alice")
        for method, path, body in ROUTES:
            member = await h.client.request(method, path, json=body, headers=headers)
            assert member.status_code == 403, (method, path)
            assert member.json()["type"].endswith("staff-only")
            anonymous = await h.client.request(method, path, json=body)
            assert anonymous.status_code == 401, (method, path)
        assert await entries(h) == 0


async def test_staff_create_search_view_obsolete_delete(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[counting_model()]) as h:
        alice, alice_headers = await h.user("alice")
        _, staff = await h.user("root", role="staff")
        created = await h.client.post(
            "/v1/staff/memory",
            json={
                "question": QUESTION,
                "answer": "File > Export > Outlook.",
                "tags": ["calendar"],
                "phase": "support",
                "project": "desk",
                "initial_score": 0.9,
            },
            headers=staff,
        )
        assert created.status_code == 201, created.text
        entry = created.json()
        assert entry["scope"] == "persona:eko" and entry["user_public_id"] is None
        assert entry["metadata"]["tags"] == ["calendar"] and entry["metadata"]["phase"] == "support"
        assert entry["metadata"]["validated_by"] == "staff" and entry["status"] == "active"
        private = await h.client.post(
            "/v1/staff/memory",
            json={"question": "What is my desk number?", "answer": "42", "user_public_id": alice},
            headers=staff,
        )
        assert private.status_code == 201 and private.json()["user_public_id"] == alice

        search = await h.client.post(
            "/v1/staff/memory/search",
            json={"question": "How do I export my calendar to Outlook please?"},
            headers=staff,
        )
        assert search.status_code == 200
        found = search.json()
        assert found["served_entry_id"] == entry["id"] and found["match"] == "semantic"
        assert found["threshold"] == 0.9 and found["embedder"] == "hash-384"
        assert found["candidates"][0]["servable"] and found["candidates"][0]["check"]["passed"]
        # Searching never counts as a use.
        shown = (await h.client.get(f"/v1/staff/memory/{entry['id']}", headers=staff)).json()
        assert shown["usage_count"] == 0
        # The private entry is only searched when that user's scope is asked for.
        desk = {"question": "What is my desk number?"}
        nobody = await h.client.post("/v1/staff/memory/search", json=desk, headers=staff)
        assert nobody.json()["served_entry_id"] is None
        hers = await h.client.post(
            "/v1/staff/memory/search", json={**desk, "user_public_id": alice}, headers=staff
        )
        assert hers.json()["served_entry_id"] == private.json()["id"]

        listed = (await h.client.get("/v1/staff/memory", headers=staff)).json()
        assert listed["total"] == 2
        filtered = await h.client.get(
            "/v1/staff/memory", params={"q": "outlook", "status": "active"}, headers=staff
        )
        assert [e["id"] for e in filtered.json()["items"]] == [entry["id"]]
        scoped = await h.client.get(
            "/v1/staff/memory", params={"scope": f"persona:eko|user:{alice}"}, headers=staff
        )
        assert scoped.json()["total"] == 1

        obsolete = await h.client.post(f"/v1/staff/memory/{entry['id']}/obsolete", headers=staff)
        assert obsolete.status_code == 200 and obsolete.json()["status"] == "obsolete"
        room = await h.direct_room(alice_headers)
        reply = await ask(h, alice_headers, room, QUESTION)
        assert reply["assistant_message"]["type"] != "cached_response"
        again = await h.client.post(
            "/v1/staff/memory/search", json={"question": QUESTION}, headers=staff
        )
        assert again.json()["served_entry_id"] is None

        deleted = await h.client.delete(f"/v1/staff/memory/{entry['id']}", headers=staff)
        assert deleted.status_code == 204
        for method, path in (
            ("GET", f"/v1/staff/memory/{entry['id']}"),
            ("DELETE", f"/v1/staff/memory/{entry['id']}"),
            ("POST", f"/v1/staff/memory/{entry['id']}/obsolete"),
        ):
            gone = await h.client.request(method, path, headers=staff)
            assert gone.status_code == 404 and gone.json()["type"].endswith("entry-not-found")


async def test_staff_create_refuses_bad_input_and_stores_nothing(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        _, staff = await h.user("root", role="staff")
        bad_bodies = [
            ({"question": "", "answer": "a"}, 422),
            ({"question": "q", "answer": "a", "surprise": True}, 422),
            ({"question": "q", "answer": "a", "persona": "nobody"}, 422),
            ({"question": "q", "answer": "a", "persona": "../etc"}, 422),
            ({"question": "q", "answer": "a", "user_public_id": "ghost"}, 404),
            ({"question": "q", "answer": "Faux. <non valide>"}, 422),
            ({"question": "q", "answer": "x" * 8001}, 422),
            ({"question": "q", "answer": "a", "initial_score": 2}, 422),
        ]
        for body, status in bad_bodies:
            response = await h.client.post("/v1/staff/memory", json=body, headers=staff)
            assert response.status_code == status, (body, response.text)
            assert response.headers["content-type"] == "application/problem+json"
        invalid = await h.client.post(
            "/v1/staff/memory", json={"question": "q", "answer": "<non valide>"}, headers=staff
        )
        assert invalid.json()["reason"] == "marked_invalid"
        bad_search = await h.client.post(
            "/v1/staff/memory/search", json={"question": "q", "threshold": 3}, headers=staff
        )
        assert bad_search.status_code == 422
        bad_status = await h.client.get("/v1/staff/memory?status=deleted", headers=staff)
        assert bad_status.status_code == 422
        assert await entries(h) == 0


async def test_staff_validate_any_answer_with_a_scope_choice(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[counting_model()]) as h:
        _, alice_headers = await h.user("alice")
        _, bob_headers = await h.user("bob")
        _, staff = await h.user("root", role="staff")
        room = await h.direct_room(alice_headers)
        use_writer(h, drop=["personal_context"])
        body = await ask(h, alice_headers, room, QUESTION)
        message_id = body["assistant_message"]["id"]

        not_answer = await h.client.post(
            "/v1/staff/memory/validate",
            json={"message_id": body["user_message"]["id"]},
            headers=staff,
        )
        assert not_answer.status_code == 422 and not_answer.json()["reason"] == "not_an_answer"
        missing = await h.client.post(
            "/v1/staff/memory/validate", json={"message_id": "nope"}, headers=staff
        )
        assert missing.status_code == 404

        shared = await h.client.post(
            "/v1/staff/memory/validate",
            json={"message_id": message_id, "scope": "shared"},
            headers=staff,
        )
        assert shared.status_code == 201, shared.text
        learned = shared.json()
        assert learned["created"] and learned["entry"]["scope"] == "persona:eko"
        assert learned["entry"]["source_message_id"] == message_id
        assert learned["entry"]["metadata"]["validated_by"] == "staff"
        repeat = await h.client.post(
            "/v1/staff/memory/validate", json={"message_id": message_id}, headers=staff
        )
        assert repeat.status_code == 200 and repeat.json()["created"] is False

        bob_room = await h.direct_room(bob_headers)
        bob = await ask(h, bob_headers, bob_room, QUESTION)
        assert bob["assistant_message"]["type"] == "cached_response"

        # Personal answers stay out, whatever staff chooses.
        restore_writer(h)
        # Remembered facts make it personal (the facts store alone does not: the writer then
        # reports whether the answer used them, tests/chat/test_personal_answers.py).
        use_writer(h, personal_context=True, personal_context_sources=["memory_facts"])
        personal = await ask(h, alice_headers, room, "What is my badge number?")
        refused = await h.client.post(
            "/v1/staff/memory/validate",
            json={"message_id": personal["assistant_message"]["id"], "scope": "shared"},
            headers=staff,
        )
        assert refused.status_code == 422 and refused.json()["reason"] == "personal_context"


async def test_staff_prune_deletes_expired_entries(make_harness: HarnessFactory) -> None:
    async with make_harness(guard_max_age_days=10, guard_auto_prune=False) as h:
        _, staff = await h.user("root", role="staff")
        ids = []
        for question in ("Where is the office?", "When is lunch?"):
            response = await h.client.post(
                "/v1/staff/memory", json={"question": question, "answer": "Ask HR."}, headers=staff
            )
            ids.append(response.json()["id"])
        await age_entry(h.services.database, ids[0], days=11)
        pruned = await h.client.post("/v1/staff/memory/prune", headers=staff)
        assert pruned.json() == {"deleted": 1, "max_age_days": 10}
        listed = (await h.client.get("/v1/staff/memory", headers=staff)).json()
        assert [e["id"] for e in listed["items"]] == [ids[1]]
        assert listed["items"][0]["expires_at"] > listed["items"][0]["created_at"]
