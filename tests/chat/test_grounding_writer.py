"""Grounded answers through the chat engine (scripted model, both backends): a question about
the user's life nothing known mentions reaches the writer with the note, an invented answer is
replaced in what the API returns and stores, and the reply's metadata says so."""

from __future__ import annotations

from typing import Any

from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.prompts.library import PromptLibrary
from tests.api.conftest import HarnessFactory
from tests.chat.helpers import engine_model, known_user, send, writer_requests, writer_system

INVENTED = "Your sister plays the piano and the violin."
NOTE_EN = "# Memory has nothing on this question"
NOTE_FR = "# La mémoire ne sait rien sur cette question"


def prompts() -> PromptLibrary:
    return PromptLibrary()


def last_user_text(model: FunctionModel) -> str:
    return str(writer_requests(model)[-1].messages[-1].content)


async def stored_reply(h: Any, room_id: str, headers: dict[str, str], reply_id: str) -> Any:
    page = (await h.client.get(f"/v1/rooms/{room_id}/messages", headers=headers)).json()
    return next(item for item in page["items"] if item["id"] == reply_id)


async def test_an_invented_answer_about_an_unknown_sister_is_replaced(
    make_harness: HarnessFactory,
) -> None:
    model = engine_model(writer=INVENTED)
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h)
        body = await send(h, room_id, headers, "What instruments does my sister play?")
        reply = body["assistant_message"]
        expected = prompts().text("writer/grounding/dont_know_en.md")
        assert reply["content"] == expected
        stored = await stored_reply(h, room_id, headers, reply["id"])
    assert stored["content"] == expected
    # The model was told: the note in its instructions, the reminder after the message.
    assert NOTE_EN in writer_system(model)
    assert "(sister)" in writer_system(model)
    reminder = prompts().text("writer/grounding/reminder_en.md")
    assert last_user_text(model).endswith(f"({reminder})")
    grounding = reply["metadata"]["grounding"]
    assert grounding == {
        "subject": "sister",
        "remembered": False,
        "note": True,
        "checked": True,
        "flagged": True,
        "corrected": True,
        "original": INVENTED,
    }
    assert stored["metadata"]["grounding"] == grounding


async def test_an_honest_answer_is_kept(make_harness: HarnessFactory) -> None:
    honest = "Je ne sais pas : tu ne m'as jamais parlé de ta sœur. Elle joue de quoi ?"
    model = engine_model(writer=honest)
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h)
        body = await send(h, room_id, headers, "De quel instrument joue ma sœur ?")
    reply = body["assistant_message"]
    assert reply["content"] == honest
    assert NOTE_FR in writer_system(model)
    grounding = reply["metadata"]["grounding"]
    assert grounding["note"] and grounding["checked"]
    assert not grounding["flagged"] and not grounding["corrected"]
    assert grounding["original"] is None


async def test_a_french_invention_is_replaced_in_french(make_harness: HarnessFactory) -> None:
    model = engine_model(writer="Tu habites à Paris, dans le 11e.")
    async with make_harness(providers=[model]) as h:
        # No city among this user's facts.
        _, headers, room_id = await known_user(
            h, facts={"first_name": "Marie", "use_tu_form": True, "main_activity": "architecte"}
        )
        body = await send(h, room_id, headers, "Où j'habite ?")
    reply = body["assistant_message"]
    assert reply["content"] == prompts().text("writer/grounding/dont_know_fr_tu.md")
    assert reply["metadata"]["grounding"]["subject"] == "home"


async def test_a_fact_stated_earlier_in_the_room_is_not_doubted(
    make_harness: HarnessFactory,
) -> None:
    def writer(request: ProviderRequest) -> str:
        last = str(request.messages[-1].content)
        return "Your sister plays the cello." if "?" in last else "Noted."

    model = engine_model(writer=writer)
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h)
        await send(h, room_id, headers, "My sister Emma plays the cello in an orchestra.")
        body = await send(h, room_id, headers, "What instruments does my sister play?")
    reply = body["assistant_message"]
    assert reply["content"] == "Your sister plays the cello."
    assert reply["metadata"]["grounding"] == {
        "subject": "sister",
        "remembered": True,
        "note": False,
        "checked": False,
        "flagged": False,
        "corrected": False,
        "original": None,
    }
    assert NOTE_EN not in writer_system(model)


async def test_a_known_fact_is_memory(make_harness: HarnessFactory) -> None:
    model = engine_model(writer="Tu habites à Lyon.")
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h)  # main_city: Lyon
        body = await send(h, room_id, headers, "Où j'habite ?")
    reply = body["assistant_message"]
    assert reply["content"] == "Tu habites à Lyon."
    assert reply["metadata"]["grounding"]["remembered"] is True
    assert NOTE_FR not in writer_system(model)


async def test_questions_not_about_the_user_are_left_alone(make_harness: HarnessFactory) -> None:
    model = engine_model(writer="It fails on line 3: the list is empty.")
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h)
        body = await send(h, room_id, headers, "Why does my code crash?")
    reply = body["assistant_message"]
    assert reply["content"] == "It fails on line 3: the list is empty."
    assert "grounding" not in reply["metadata"]
    assert NOTE_EN not in writer_system(model)


async def test_grounding_can_be_turned_off(make_harness: HarnessFactory) -> None:
    model = engine_model(writer=INVENTED)
    async with make_harness(providers=[model], writer_grounding=False) as h:
        _, headers, room_id = await known_user(h)
        body = await send(h, room_id, headers, "What instruments does my sister play?")
    reply = body["assistant_message"]
    assert reply["content"] == INVENTED
    assert "grounding" not in reply["metadata"]
    assert NOTE_EN not in writer_system(model)
