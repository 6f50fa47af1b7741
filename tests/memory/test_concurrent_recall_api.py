"""Concurrent messages in one room each get their memory section.

A room's history whose turns are not in the turn index yet (imported, or the after-reply jobs
missed them): every message's context build catches up the same turns at the same time.
Concurrent catch-ups used to write the same vectors and collide on a unique key; only
embedding errors were caught, so those replies were written without their memory section.
"""

from __future__ import annotations

import asyncio
import json
import uuid

from eko.chat.memory_context import SECTION_TITLE
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.store import messages as message_repo
from eko.store import users as user_repo
from tests.api.conftest import HarnessFactory

from .conftest import schema_title
from .test_recent_window_api import invented, is_writer, writer_prompt

HISTORY = 30  # exchanges: all but the newest 10 are older than the recent window
CONCURRENT = 20  # questions about the 20 oldest notes, sent at once


def scripted(request: ProviderRequest) -> str:
    if schema_title(request) == "MemoryExtraction":
        return json.dumps({"items": [], "answered_goals": []})
    return "Noté."


async def test_concurrent_messages_in_one_room_all_get_their_memory_section(
    make_harness: HarnessFactory,
) -> None:
    model = FunctionModel(scripted)
    async with make_harness(providers=[model]) as h:
        database = h.services.database
        async with database.session() as session:
            user, key = await user_repo.create_user(session, display_name="alice", is_pro=True)
        headers = {"Authorization": f"Bearer {key}"}
        room = await h.direct_room(headers)
        # Stored directly: no after-reply job has indexed these turns.
        for number in range(HISTORY):
            for role, content in (
                (
                    "user",
                    f"Note {number}: the word {invented(number, 'x')} means "
                    f"{invented(number, 'q')}.",
                ),
                ("assistant", "Noté."),
            ):
                await message_repo.append_message(
                    database,
                    room_id=room,
                    role=role,
                    content=content,
                    sender_id=user.id if role == "user" else None,
                    dedupe_key=f"test:{uuid.uuid4().hex}",
                )

        responses = await asyncio.gather(
            *(
                h.client.post(
                    f"/v1/rooms/{room}/messages",
                    headers=headers,
                    json={"content": f"What does {invented(number, 'x')} mean?"},
                )
                for number in range(CONCURRENT)
            )
        )

    assert [r.status_code for r in responses] == [201] * CONCURRENT
    writers = [r for r in model.requests if is_writer(r)]
    assert len(writers) == CONCURRENT
    without = [number for number, r in enumerate(writers) if SECTION_TITLE not in writer_prompt(r)]
    assert without == [], f"{len(without)} of {CONCURRENT} replies written without memory"
    # What each one remembered is the note it asks about (its question is its last message).
    for number in range(CONCURRENT):
        asking = [r for r in writers if invented(number, "x") in r.messages[-1].content]
        assert len(asking) == 1
        assert invented(number, "q") in writer_prompt(asking[0])
