"""The writer is told the language of the message it answers (`reply_language`), so a small
model does not follow the history's language; nothing is said when the language is unclear or
the setting is off."""

from __future__ import annotations

from tests.api.conftest import HarnessFactory
from tests.chat.helpers import engine_model, known_user, send, writer_system


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
        await send(h, room_id, headers, "What instruments does my sister play?")
        english = writer_system(model)
        await send(h, room_id, headers, "Miso")
        unclear = writer_system(model)
    assert _language_line(french) == "reply_language: French (français)"
    assert _language_line(english) == "reply_language: English"
    # A name alone has no clear language: the writer is told nothing rather than a guess.
    assert _language_line(unclear) is None
    assert "even when earlier messages were in another" in english


async def test_the_language_line_can_be_turned_off(make_harness: HarnessFactory) -> None:
    model = engine_model(writer="Sure.")
    async with make_harness(providers=[model], writer_reply_language=False) as h:
        _, headers, room_id = await known_user(h)
        await send(h, room_id, headers, "What instruments does my sister play?")
    assert _language_line(writer_system(model)) is None
