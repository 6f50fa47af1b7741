"""A conversation as a file: Markdown to read, JSON to process (GET /v1/rooms/{id}/export)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from eko.api.schemas.rooms import RoomOut
from eko.memory.speakers import speaker_names, speaker_of
from eko.store import messages as message_repo
from eko.store.models import Message
from eko.text import strip_accents

PAGE = 1000
# What a message's metadata may tell a reader of the export (the rest is the server's).
KEPT_METADATA = ("stopped", "incomplete", "truncated", "fallback", "provider", "model")


@dataclass(frozen=True, slots=True)
class ExportedTurn:
    seq: int
    role: str
    type: str
    speaker: str
    content: str
    created_at: datetime
    metadata: dict[str, Any]


async def room_turns(
    session: AsyncSession, *, room_id: str, assistant_name: str
) -> list[ExportedTurn]:
    """Every user and assistant message of the room, in order, with who said it."""
    messages: list[Message] = []
    after = 0
    while True:
        page = await message_repo.list_messages(
            session, room_id=room_id, limit=PAGE, after_seq=after
        )
        messages.extend(page)
        if len(page) < PAGE:
            break
        after = page[-1].seq
    names = await speaker_names(session, messages)
    return [
        ExportedTurn(
            seq=m.seq,
            role=m.role,
            type=m.type,
            speaker=speaker_of(m, names, assistant_name),
            content=m.content,
            created_at=m.created_at,
            metadata={k: v for k, v in (m.meta or {}).items() if k in KEPT_METADATA},
        )
        for m in messages
        if m.role in ("user", "assistant")
    ]


def _stamp(when: datetime) -> str:
    aware = when if when.tzinfo else when.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def as_markdown(room: RoomOut, turns: Sequence[ExportedTurn], *, now: datetime) -> str:
    lines = [f"# {room.title}", "", f"_Exported {_stamp(now)} · {len(turns)} messages_", ""]
    for turn in turns:
        lines += ["---", "", f"**{turn.speaker}** · {_stamp(turn.created_at)}", ""]
        lines += [turn.content.rstrip() or "_(empty)_", ""]
    return "\n".join(lines)


def as_json(room: RoomOut, turns: Sequence[ExportedTurn], *, now: datetime) -> str:
    body = {
        "room": room.model_dump(mode="json"),
        "exported_at": now.isoformat(),
        "messages": [
            {
                "seq": t.seq,
                "role": t.role,
                "type": t.type,
                "speaker": t.speaker,
                "content": t.content,
                "created_at": t.created_at.isoformat(),
                "metadata": t.metadata,
            }
            for t in turns
        ],
    }
    return json.dumps(body, ensure_ascii=False, indent=2)


def file_name(room: RoomOut, extension: str) -> str:
    """An ASCII file name from the title ("Voyage à Lyon" -> "voyage-a-lyon.md")."""
    slug = re.sub(r"[^a-z0-9]+", "-", strip_accents(room.title).lower()).strip("-")[:60]
    return f"{slug or 'conversation'}.{extension}"
