"""The writer is told the language of the message it answers — in the turn's inputs
(`reply_language`) and again right after the message — so a small model does not follow the
history's language; nothing is said when the language is unclear or the setting is off, and the
stored message is never changed."""

from __future__ import annotations

from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from tests.api.conftest import HarnessFactory
from tests.chat.helpers import engine_model, known_user, send, writer_requests, writer_system


def _writer_calls(model: FunctionModel) -> list[ProviderRequest]:
    """The writer's calls (a list question also gets a phrase call, eko.memory)."""
    return [r for r in writer_requests(model) if "How you answer" in r.messages[0].content]


def _language_line(system: str) -> str | None:
    lines = [line for line in system.splitlines() if line.startswith("reply_language:")]
    assert len(lines) <= 1, lines
    return lines[0] if lines else None


async def test_the_writer_is_told_the_language_of_the_last_message(
    make_harness: HarnessFactory,
) -> None:
    model = engine_model(writer="Elle joue du violon.")
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h)
        await send(h, room_id, headers, "Ma soeur Léa peint des aquarelles et joue du violon.")
        french = writer_system(model)
        body = await send(h, room_id, headers, "What instruments does my sister play?")
        english = writer_system(model)
        await send(h, room_id, headers, "Miso")
        unclear = writer_system(model)
        history = await h.client.get(f"/v1/rooms/{room_id}/messages", headers=headers)
    # What the model read last, after each message: the note in the message's language.
    last = [request.messages[-1] for request in _writer_calls(model)]
    assert [(m.role, m.content) for m in last] == [
        ("user", "Ma soeur Léa peint des aquarelles et joue du violon.\n\n(Réponds en français.)"),
        ("user", "What instruments does my sister play?\n\n(Answer in English.)"),
        ("user", "Miso"),
    ]
    # Earlier turns go as they were said, and nothing stored carries the note.
    assert _writer_calls(model)[1].messages[1].content.endswith("violon.")
    assert body["user_message"]["content"] == "What instruments does my sister play?"
    stored = [m["content"] for m in history.json()["items"] if m["role"] == "user"]
    assert not any("(Answer in English.)" in text or "(Réponds" in text for text in stored)
    assert _language_line(french) == "reply_language: French (français)"
    assert _language_line(english) == "reply_language: English"
    # A name alone has no clear language: the writer is told nothing rather than a guess.
    assert _language_line(unclear) is None
    assert "even when earlier messages were in another" in english


async def test_the_language_line_can_be_turned_off(make_harness: HarnessFactory) -> None:
    model = engine_model(writer="Sure.")
    # The grounding reminder (a personal question nothing known answers) is off as well: the
    # message must reach the model as the user wrote it.
    async with make_harness(
        providers=[model], writer_reply_language=False, writer_grounding=False
    ) as h:
        _, headers, room_id = await known_user(h)
        await send(h, room_id, headers, "What instruments does my sister play?")
    assert _language_line(writer_system(model)) is None
    assert _writer_calls(model)[-1].messages[-1].content == "What instruments does my sister play?"
