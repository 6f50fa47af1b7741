"""The writer's prompt rendered without a model (ChatEngineParts.preview) is the prompt the
writer sends: through the API, a scripted model declaring a prompt budget records the writer's
messages for a question about an imported history; the preview of the same message gives the
same messages — memory section (sized by that budget) included — and asks no model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select

from eko.chat.pipeline import Turn
from eko.llm.providers import FunctionModel
from eko.llm.types import ChatMessage, ProviderRequest
from eko.store.models import Message, Room, User
from tests.api.conftest import HarnessFactory
from tests.memory.test_recent_window_api import is_writer, pro_user

SECRET = "flumbrewick"


class Recorder:
    def __init__(self) -> None:
        self.writer: list[tuple[ChatMessage, ...]] = []
        self.calls = 0
        self.model = FunctionModel(self.answer)
        self.model.max_prompt_tokens = 2_500  # type: ignore[attr-defined]

    def answer(self, request: ProviderRequest) -> str:
        self.calls += 1
        if is_writer(request):
            self.writer.append(request.messages)
        return "Noté."


def history() -> list[dict[str, Any]]:
    start = datetime(2023, 3, 1, tzinfo=UTC)
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"The {SECRET} is the blue watering can my uncle left me."
            if i == 40
            else f"Turn {i}: the tomatoes and beans grew, the neighbours came to talk.",
            "created_at": (start + timedelta(hours=i)).isoformat(),
        }
        for i in range(120)
    ]


async def test_the_preview_renders_the_prompt_the_writer_sends(
    make_harness: HarnessFactory,
) -> None:
    reader = Recorder()
    async with make_harness(providers=[reader.model], recent_turns=2) as h:
        _, headers = await pro_user(h, "nina")
        room_id = await h.direct_room(headers)
        imported = await h.client.post(
            f"/v1/rooms/{room_id}/messages:import", headers=headers, json={"messages": history()}
        )
        assert imported.status_code == 201, imported.text
        # Every imported turn indexed first: the two renderings then read the same memory.
        await h.services.jobs.drain()
        asked = await h.client.post(
            f"/v1/rooms/{room_id}/messages",
            headers=headers,
            json={"content": f"What is the {SECRET}?"},
        )
        assert asked.status_code == 201, asked.text
        await h.services.jobs.drain()
        async with h.services.database.session() as session:
            message = (
                await session.execute(
                    select(Message).where(
                        Message.room_id == room_id, Message.content == f"What is the {SECRET}?"
                    )
                )
            ).scalar_one()
            room = await session.get(Room, room_id)
            user = await session.get(User, message.sender_id)
        assert room is not None and user is not None
        calls = reader.calls
        preview = await h.services.engine.preview.render(
            Turn(user=user, room=room, user_message=message)
        )

    assert reader.calls == calls  # no model asked
    assert len(reader.writer) == 1
    sent = reader.writer[0]
    assert preview.messages == sent
    system = preview.messages[0].content
    assert "## Memory (earlier in this conversation" in system
    assert f"The {SECRET} is the blue watering can" in system
    assert preview.messages[-1].content.startswith(f"What is the {SECRET}?")
    assert preview.decision.rules_applied[0] == "fallback:preview"
