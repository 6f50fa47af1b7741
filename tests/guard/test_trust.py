"""Who may publish to the shared cache (issue 9, cross-user cache poisoning): a member's thumbs
up is served back to that member only; staff validation, the operator's cacheable intents and
the agreement of K distinct users publish to everyone."""

from __future__ import annotations

from typing import Any

from eko.llm.providers import FunctionModel
from tests.api.conftest import HarnessFactory
from tests.guard.test_api import QUESTION, ask, calls_for, counting_model, rate, use_writer

EXACT_VARIANT = "how do I export my calendar to outlook"
PARAPHRASE = "How do I export my calendar to Outlook please?"


class SettableModel:
    """A model that answers whatever `text` currently is: two users can get the same answer
    in their own rooms, or different ones."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.model = FunctionModel(lambda _request: self.text)


async def entry(h: Any, staff: dict[str, str], entry_id: str) -> dict[str, Any]:
    response = await h.client.get(f"/v1/staff/memory/{entry_id}", headers=staff)
    assert response.status_code == 200, response.text
    shown: dict[str, Any] = response.json()
    return shown


async def assert_not_served(
    h: Any, headers: dict[str, str], texts: tuple[str, ...], *, not_content: str
) -> None:
    """Each question goes to the model in a fresh room of this user: no cached answer."""
    for text in texts:
        room = await h.direct_room(headers)
        body = await ask(h, headers, room, text)
        reply = body["assistant_message"]
        assert reply["type"] != "cached_response", (text, reply["metadata"].get("memory_guard"))
        assert reply["content"] != not_content
        assert await calls_for(h, headers, room, body)


async def assert_served(
    h: Any, headers: dict[str, str], text: str, *, content: str, scope: str, match: str
) -> dict[str, Any]:
    room = await h.direct_room(headers)
    body = await ask(h, headers, room, text)
    reply = body["assistant_message"]
    assert reply["type"] == "cached_response", (text, reply["content"])
    assert reply["content"] == content
    meta: dict[str, Any] = reply["metadata"]["memory_guard"]
    assert meta["scope"] == scope and meta["match"] == match
    assert await calls_for(h, headers, room, body) == []
    return meta


async def test_a_members_thumbs_up_is_served_to_that_member_only(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(providers=[counting_model()]) as h:
        alice, alice_headers = await h.user("alice")
        bob, bob_headers = await h.user("bob")
        _, staff = await h.user("root", role="staff")
        bob_room = await h.direct_room(bob_headers)
        first = await ask(h, bob_headers, bob_room, QUESTION)
        answer = first["assistant_message"]["content"]
        # The probe's case: the first message of a room, which the chat engine reports as
        # free of personal context (what used to publish a thumbs up to everyone).
        assert first["assistant_message"]["metadata"]["personal_context"] is False

        verdict = (await rate(h, bob_headers, first)).json()
        assert verdict["learned"] is True and verdict["refused"] is None
        learned = await entry(h, staff, verdict["entry_id"])
        assert learned["scope"] == f"persona:eko|user:{bob}"
        assert learned["metadata"]["validated_by"] == "feedback"

        # Alice: the same question, its normalized form and a paraphrase all go to the model.
        await assert_not_served(
            h, alice_headers, (QUESTION, EXACT_VARIANT, PARAPHRASE), not_content=answer
        )
        search = await h.client.post(
            "/v1/staff/memory/search",
            json={"question": QUESTION, "user_public_id": alice},
            headers=staff,
        )
        assert search.json()["served_entry_id"] is None

        # Bob gets his own validated answer back, exact and paraphrased, in any of his rooms.
        exact = await assert_served(
            h, bob_headers, EXACT_VARIANT, content=answer, scope="private", match="exact"
        )
        assert exact["entry_id"] == verdict["entry_id"]
        await assert_served(
            h, bob_headers, PARAPHRASE, content=answer, scope="private", match="semantic"
        )


async def test_a_lobby_members_thumbs_up_stays_with_that_member(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(providers=[counting_model()]) as h:
        alice, alice_headers = await h.user("alice")
        bob, bob_headers = await h.user("bob")
        _, staff = await h.user("root", role="staff")
        lobby = await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=alice_headers)
        lobby_id = lobby.json()["id"]
        added = await h.client.post(
            f"/v1/rooms/{lobby_id}/members", json={"public_id": bob}, headers=alice_headers
        )
        assert added.status_code == 204
        asked = await ask(h, alice_headers, lobby_id, f"@Eko, {QUESTION}")
        answer = asked["assistant_message"]["content"]

        # Bob validates Alice's answer: his entry, not one in Alice's scope.
        bobs = (await rate(h, bob_headers, asked)).json()
        assert bobs["learned"] is True
        assert (await entry(h, staff, bobs["entry_id"]))["scope"] == f"persona:eko|user:{bob}"
        await assert_not_served(h, alice_headers, (QUESTION,), not_content=answer)

        # Alice may validate the same reply for herself: a second, separate entry.
        alices = (await rate(h, alice_headers, asked)).json()
        assert alices["learned"] is True and alices["entry_id"] != bobs["entry_id"]
        assert (await entry(h, staff, alices["entry_id"]))["scope"] == (f"persona:eko|user:{alice}")
        for headers in (alice_headers, bob_headers):
            await assert_served(
                h, headers, QUESTION, content=answer, scope="private", match="exact"
            )


async def test_staff_validation_publishes_to_everyone(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[counting_model()]) as h:
        _, alice_headers = await h.user("alice")
        _, bob_headers = await h.user("bob")
        _, staff = await h.user("root", role="staff")
        bob_room = await h.direct_room(bob_headers)
        first = await ask(h, bob_headers, bob_room, QUESTION)
        answer = first["assistant_message"]["content"]
        assert (await rate(h, bob_headers, first)).json()["learned"] is True

        # The message Bob validated for himself, validated again by staff: now shared.
        validated = await h.client.post(
            "/v1/staff/memory/validate",
            json={"message_id": first["assistant_message"]["id"]},
            headers=staff,
        )
        assert validated.status_code == 201, validated.text
        shared = validated.json()["entry"]
        assert shared["scope"] == "persona:eko" and shared["metadata"]["validated_by"] == "staff"

        exact = await assert_served(
            h, alice_headers, QUESTION, content=answer, scope="shared", match="exact"
        )
        assert exact["entry_id"] == shared["id"]
        await assert_served(
            h, alice_headers, PARAPHRASE, content=answer, scope="shared", match="semantic"
        )


async def test_many_thumbs_up_publish_nothing_without_agreement_configured(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(providers=[counting_model()]) as h:
        _, alice_headers = await h.user("alice")
        for name in ("bob", "carol", "dave"):
            _, headers = await h.user(name)
            room = await h.direct_room(headers)
            body = await ask(h, headers, room, QUESTION)
            assert (await rate(h, headers, body)).json()["learned"] is True
        await assert_not_served(h, alice_headers, (QUESTION,), not_content="")


async def test_agreement_of_k_distinct_users_publishes(make_harness: HarnessFactory) -> None:
    answers = SettableModel("Use File > Export > ICS.")
    async with make_harness(providers=[answers.model], guard_shared_min_agreeing_users=2) as h:
        _, alice_headers = await h.user("alice")
        bob, bob_headers = await h.user("bob")
        carol, carol_headers = await h.user("carol")
        _, staff = await h.user("root", role="staff")

        # Bob alone, twice on the same answer and once on another answer: one user.
        bob_first = await ask(h, bob_headers, await h.direct_room(bob_headers), QUESTION)
        answers.text = "Open Outlook and import the file."
        bob_second = await ask(h, bob_headers, await h.direct_room(bob_headers), QUESTION)
        answer = bob_second["assistant_message"]["content"]
        assert bob_second["assistant_message"]["type"] == "message"  # nothing learned yet
        for body in (bob_first, bob_first, bob_second):
            assert (await rate(h, bob_headers, body)).status_code == 200
        answers.text = "Something else entirely."
        await assert_not_served(h, alice_headers, (QUESTION,), not_content=answer)

        # Carol gets the answer Bob validated last (his vote: it superseded his first), with
        # extra spaces (the same text), and agrees: two distinct users on one answer, published.
        answers.text = f"  {answer}\n"
        carol_room = await h.direct_room(carol_headers)
        carol_first = await ask(h, carol_headers, carol_room, QUESTION)
        assert (await rate(h, carol_headers, carol_first)).json()["learned"] is True
        answers.text = "Something else entirely."
        served = await assert_served(
            h, alice_headers, QUESTION, content=answer, scope="shared", match="exact"
        )
        promoted = await entry(h, staff, served["entry_id"])
        assert promoted["scope"] == "persona:eko"
        assert promoted["metadata"]["validated_by"] == "agreement"
        assert sorted(promoted["metadata"]["authors"]) == sorted([f"user:{bob}", f"user:{carol}"])
        await assert_served(
            h, alice_headers, PARAPHRASE, content=answer, scope="shared", match="semantic"
        )

        # Carol takes her thumbs up back: one user left, the published answer is withdrawn.
        down = (await rate(h, carol_headers, carol_first, "down")).json()
        assert down["retracted"] is True
        withdrawn = await entry(h, staff, served["entry_id"])
        assert withdrawn["status"] == "obsolete"
        assert withdrawn["metadata"]["obsolete"]["reason"] == "agreement_withdrawn"
        await assert_not_served(h, alice_headers, (QUESTION,), not_content=answer)


async def test_users_who_approved_different_answers_do_not_agree(
    make_harness: HarnessFactory,
) -> None:
    """Issue #32: A's 👍 on one answer and B's 👍 on a different answer to the same question
    are not two users agreeing; neither answer is served to a third user."""
    async with make_harness(providers=[counting_model()], guard_shared_min_agreeing_users=2) as h:
        _, alice_headers = await h.user("alice")
        seen = []
        for name in ("bob", "carol"):
            _, headers = await h.user(name)
            body = await ask(h, headers, await h.direct_room(headers), QUESTION)
            seen.append(body["assistant_message"]["content"])
            assert (await rate(h, headers, body)).json()["learned"] is True
        assert seen[0] != seen[1]
        for answer in seen:
            await assert_not_served(h, alice_headers, (QUESTION,), not_content=answer)


async def test_users_who_approved_the_same_answer_text_agree(
    make_harness: HarnessFactory,
) -> None:
    """The same answer text, approved by two users in their own rooms: served to a third."""
    answers = SettableModel("Export it as an ICS file, then import it in Outlook.")
    async with make_harness(providers=[answers.model], guard_shared_min_agreeing_users=2) as h:
        _, alice_headers = await h.user("alice")
        for name in ("bob", "carol"):
            _, headers = await h.user(name)
            body = await ask(h, headers, await h.direct_room(headers), QUESTION)
            assert (await rate(h, headers, body)).json()["learned"] is True
        shared = answers.text
        answers.text = "A fresh answer from the model."
        await assert_served(
            h, alice_headers, QUESTION, content=shared, scope="shared", match="exact"
        )


async def test_agreement_never_publishes_conversation_dependent_answers(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(providers=[counting_model()], guard_shared_min_agreeing_users=2) as h:
        _, alice_headers = await h.user("alice")
        use_writer(h, personal_context=True, personal_context_sources=["history"])
        for name in ("bob", "carol"):
            _, headers = await h.user(name)
            body = await ask(h, headers, await h.direct_room(headers), QUESTION)
            assert (await rate(h, headers, body)).json()["learned"] is True
        await assert_not_served(h, alice_headers, (QUESTION,), not_content="")


async def test_auto_learned_intents_are_shared_only_without_personal_context(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(
        providers=[counting_model()], guard_cacheable_intents=["general_question"]
    ) as h:
        _, alice_headers = await h.user("alice")
        _, bob_headers = await h.user("bob")
        use_writer(
            h,
            intent="general_question",
            personal_context=True,
            personal_context_sources=["history"],
        )
        bob_room = await h.direct_room(bob_headers)
        first = await ask(h, bob_headers, bob_room, QUESTION)
        await h.services.jobs.drain()
        answer = first["assistant_message"]["content"]
        # Learned for Bob (the asker) only: it may lean on his conversation.
        await assert_served(
            h, bob_headers, QUESTION, content=answer, scope="private", match="exact"
        )
        await assert_not_served(h, alice_headers, (QUESTION,), not_content=answer)
