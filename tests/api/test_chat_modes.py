"""Modes through the API: smalltalk intro (facts learnt from answers), discovery, gating."""

from __future__ import annotations

from typing import Any

from eko.llm.types import ProviderRequest
from tests.api.conftest import HarnessFactory
from tests.chat.helpers import (
    engine_model,
    known_user,
    orchestrator_json,
    send,
    writer_system,
)


async def _profile(h: Any, public_id: str, headers: dict[str, str]) -> dict[str, Any]:
    response = await h.client.get(f"/v1/users/{public_id}/chat-profile", headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_smalltalk_intro_collects_the_required_facts(make_harness: HarnessFactory) -> None:
    model = engine_model(orchestrator_json("small_talk"), writer="Enchantée ! Et toi ?")
    async with make_harness(providers=[model]) as h:
        public_id, headers = await h.user("newcomer")
        room_id = await h.direct_room(headers)
        turns = [
            ("Bonjour !", None, "first_name"),
            ("Je m'appelle Marie", ("first_name", "Marie"), "use_tu_form"),
            ("oui on peut se tutoyer", ("use_tu_form", True), "main_city"),
            ("J'habite à Lyon", ("main_city", "Lyon"), "main_activity"),
            ("Je suis architecte", ("main_activity", "architecte"), None),
        ]
        for text, learned, next_key in turns:
            meta = (await send(h, room_id, headers, text))["assistant_message"]["metadata"]
            assert meta["mode"] == "smalltalk_intro", text
            assert meta["intent"] == "smalltalk_intro"
            assert meta["smalltalk_target_key"] == next_key, text
            expected = [] if learned is None else [{"fact_key": learned[0], "value": learned[1]}]
            assert meta["learned_facts"] == expected, text
        assert "first_name = their first name" in writer_system(model, 0)
        assert "- Then ask" in writer_system(model, 0)
        profile = await _profile(h, public_id, headers)
        facts = {f["fact_key"]: f for f in profile["facts"]}
        assert {k: f["value"] for k, f in facts.items()} == {
            "first_name": "Marie",
            "use_tu_form": True,
            "main_city": "Lyon",
            "main_activity": "architecte",
        }
        assert facts["use_tu_form"]["value_type"] == "boolean"
        assert facts["first_name"]["source_ref"].startswith("message:")
        assert profile["missing_required"] == []
        assert profile["settings"]["intro_smalltalk_done"] is True
        assert profile["settings"]["intro_smalltalk_turns"] == 5

        after = (await send(h, room_id, headers, "Coucou"))["assistant_message"]["metadata"]
        assert after["mode"] == "normal" and after["intent"] == "small_talk"
        assert "address: tu" in writer_system(model)
        assert "name: Marie" in writer_system(model)


async def test_a_real_task_breaks_the_intro_and_is_not_taken_as_an_answer(
    make_harness: HarnessFactory,
) -> None:
    def route(request: ProviderRequest) -> str:
        last = request.messages[-1].content
        return orchestrator_json("decision_support" if "réunion" in last else "small_talk")

    async with make_harness(providers=[engine_model(route)]) as h:
        public_id, headers = await h.user("busy")
        room_id = await h.direct_room(headers)
        await send(h, room_id, headers, "Salut")
        task = await send(h, room_id, headers, "Peux-tu m'aider à préparer ma réunion de demain ?")
        meta = task["assistant_message"]["metadata"]
        profile = await _profile(h, public_id, headers)
    assert (meta["mode"], meta["intent"]) == ("normal", "decision_support")
    assert "intro_override:decision_support" in meta["orchestrator"]["rules_applied"]
    assert meta["learned_facts"] == [] and profile["facts"] == []


async def test_forced_discovery_until_the_aha_moment(make_harness: HarnessFactory) -> None:
    texts = iter(
        [
            "Qu'est-ce qui te prend le plus de temps ?",
            "Voilà comment je t'aide là-dessus.\naha_moment=true",
            "Avec plaisir.",
        ]
    )
    model = engine_model(orchestrator_json("general_question"), writer=lambda _r: next(texts))
    async with make_harness(providers=[model]) as h:
        public_id, headers, room_id = await known_user(h)
        _, staff = await h.user("staff", role="staff")
        gates = {"forced": True, "transition_window": "J+3", "transition_reason": "trial_end"}
        assert (
            await h.client.put(f"/v1/users/{public_id}/discovery", json=gates, headers=headers)
        ).status_code == 403
        assert (
            await h.client.put(f"/v1/users/{public_id}/discovery", json=gates, headers=staff)
        ).status_code == 200

        first = (await send(h, room_id, headers, "Je veux gagner du temps"))["assistant_message"]
        assert (first["metadata"]["mode"], first["metadata"]["intent"]) == (
            "discovery",
            "discovery",
        )
        assert "Mode: discovery" in writer_system(model)
        assert "transition_window: J+3" in writer_system(model)
        assert (await _profile(h, public_id, headers))["settings"]["discovery"][
            "status"
        ] == "in_progress"

        aha = (await send(h, room_id, headers, "Ah oui, génial"))["assistant_message"]
        assert aha["content"] == "Voilà comment je t'aide là-dessus."
        assert aha["metadata"]["flags"] == {"aha_moment": True}
        discovery = (await _profile(h, public_id, headers))["settings"]["discovery"]
        assert discovery["status"] == "complete"
        assert discovery["transition_reason"] == "aha_moment"

        after = (await send(h, room_id, headers, "Merci"))["assistant_message"]
    assert after["metadata"]["mode"] == "normal"


async def test_capability_gating_with_agents_and_services(make_harness: HarnessFactory) -> None:
    model = engine_model(orchestrator_json("action_request"), writer="Je prépare un brouillon.")
    async with make_harness(providers=[model]) as h:
        public_id, headers, room_id = await known_user(h)
        _, staff = await h.user("staff", role="staff")
        ask = "Envoie un mail à Paul pour décaler la réunion"

        blocked = (await send(h, room_id, headers, ask))["assistant_message"]["metadata"]
        assert blocked["intent"] == "action_request"
        assert blocked["orchestrator"]["intent_eligible"] is False
        assert blocked["orchestrator"]["intent_block_reason"] == "no_agent"
        assert "This request is not available to the user" in writer_system(model)

        assert (
            await h.client.put(
                f"/v1/users/{public_id}/agents/ultimate", json={"active": True}, headers=headers
            )
        ).status_code == 403
        unknown = await h.client.put(
            f"/v1/users/{public_id}/agents/wizard", json={"active": True}, headers=staff
        )
        assert unknown.status_code == 422
        assert (
            await h.client.put(
                f"/v1/users/{public_id}/agents/ultimate", json={"active": True}, headers=staff
            )
        ).status_code == 200
        no_service = (await send(h, room_id, headers, ask))["assistant_message"]["metadata"]
        assert no_service["orchestrator"]["intent_block_reason"] == "service_not_connected"
        assert "calendar, email" in writer_system(model)

        connected = await h.client.put(
            f"/v1/users/{public_id}/services/email", json={"connected": True}, headers=headers
        )
        assert connected.json() == {"email": True}
        allowed = (await send(h, room_id, headers, ask))["assistant_message"]["metadata"]
        profile = await _profile(h, public_id, headers)
    assert allowed["orchestrator"]["intent_eligible"] is True
    assert "This request is not available" not in writer_system(model)
    assert profile["capabilities"]["can_action_request"] is True
    assert profile["agents"] == {"ultimate": True} and profile["services"] == {"email": True}


async def test_pro_with_personal_agent_gets_medium_context(make_harness: HarnessFactory) -> None:
    model = engine_model(orchestrator_json("deep_work", context_level="max"))
    async with make_harness(providers=[model]) as h:
        public_id, headers, room_id = await known_user(h)
        _, staff = await h.user("staff", role="staff")
        for i in range(3):
            await send(h, room_id, headers, f"ancien message {i}")
        free = (await send(h, room_id, headers, "Fais un plan"))["assistant_message"]["metadata"]
        await h.client.put(f"/v1/users/{public_id}/pro", json={"is_pro": True}, headers=staff)
        await h.client.put(
            f"/v1/users/{public_id}/agents/personal_assistant", json={"active": True}, headers=staff
        )
        pro = (await send(h, room_id, headers, "Fais un plan"))["assistant_message"]["metadata"]
    assert free["orchestrator"]["context_level"] == "light"
    assert "not_pro_forces_light" in free["orchestrator"]["rules_applied"]
    assert pro["orchestrator"]["context_level"] == "medium"
    assert pro["nodes"]["A"]["data"]["context_level"] == "medium"
    assert "agents: personal_assistant" in writer_system(model)


async def test_profile_routes_check_who_asks(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[engine_model()]) as h:
        alice_id, alice = await h.user("alice")
        _, bob = await h.user("bob")
        url = f"/v1/users/{alice_id}"
        assert (await h.client.get(f"{url}/chat-profile", headers=bob)).status_code == 404
        assert (
            await h.client.put(f"{url}/facts/main_city", json={"value": "Nice"}, headers=bob)
        ).status_code == 404
        bad_key = await h.client.put(f"{url}/facts/Bad-Key", json={"value": 1}, headers=alice)
        assert bad_key.status_code == 422
        empty = await h.client.put(f"{url}/facts/main_city", json={"value": None}, headers=alice)
        assert empty.status_code == 422
        ok = await h.client.put(f"{url}/facts/main_city", json={"value": "Nice"}, headers=alice)
        assert ok.json()["value"] == "Nice" and ok.json()["value_type"] == "string"
        assert (await h.client.delete(f"{url}/facts/main_city", headers=alice)).status_code == 204
        assert (await h.client.delete(f"{url}/facts/main_city", headers=alice)).status_code == 404


async def test_a_failing_profile_write_does_not_cost_the_answer(
    make_harness: HarnessFactory, monkeypatch: Any
) -> None:
    from eko.chat.engine import engine as engine_module

    async def broken(*_args: Any, **_kwargs: Any) -> None:
        raise ConnectionError("write refused")

    monkeypatch.setattr(engine_module, "update_settings", broken)
    model = engine_model(orchestrator_json("small_talk"), writer="Enchantée !")
    async with make_harness(providers=[model]) as h:
        _, headers = await h.user("newcomer")
        room_id = await h.direct_room(headers)
        reply = (await send(h, room_id, headers, "Bonjour !"))["assistant_message"]
    assert reply["content"] == "Enchantée !"
    assert "profile_update_failed" in reply["metadata"]["orchestrator"]["rules_applied"]
