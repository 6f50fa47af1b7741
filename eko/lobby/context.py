"""What the lobby's model calls read: recent messages with who said them, memory around a goal,
and a tone hint from the conversation (the seed's table: light → playful, a question or a
request for help → helpful, a technical subject → technical)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select

from eko.memory.items import ItemHit, MemoryItems
from eko.memory.scopes import GLOBAL, room_key
from eko.memory.text import clip, one_line
from eko.store.db import Database
from eko.store.models import Message, User

MAX_LINE_CHARS = 400

_TECHNICAL = re.compile(
    r"\b(api|bug|code|commit|merge[rd]?|deploy|d[ée]ploie|serveur|server|webrtc|sql|python|"
    r"typescript|docker|kubernetes|backend|frontend|latence|latency|cpu|gpu|stack|git|pr|"
    r"endpoint|database|base de donn[ée]es|migration|crash|build)\b",
    re.IGNORECASE,
)
_HELP = re.compile(
    r"(\?|\b(aide|help|comment|pourquoi|c'[ée]tait quoi|quelqu'un sait|qui sait|"
    r"how|why|what)\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Line:
    message: Message
    speaker: str

    def render(self) -> str:
        return f"{self.speaker}: {clip(one_line(self.message.content), MAX_LINE_CHARS)}"


async def lobby_lines(
    database: Database,
    *,
    room_id: str,
    assistant_name: str,
    limit: int | None = None,
    after_seq: int | None = None,
) -> list[Line]:
    """The lobby's messages with their speakers, chronological: the last `limit`, or every one
    after `after_seq` (then `limit` caps from the oldest)."""
    query = (
        select(Message, User.display_name)
        .outerjoin(User, User.id == Message.sender_id)
        .where(Message.room_id == room_id)
    )
    async with database.session() as session:
        if after_seq is not None:
            query = query.where(Message.seq > after_seq).order_by(Message.seq.asc())
            if limit is not None:
                query = query.limit(limit)
            rows = list((await session.execute(query)).all())
        else:
            query = query.order_by(Message.seq.desc())
            if limit is not None:
                query = query.limit(limit)
            rows = list(reversed((await session.execute(query)).all()))
    return [
        Line(message, assistant_name if message.role == "assistant" else (name or "?"))
        for message, name in rows
    ]


def render_lines(lines: Sequence[Line]) -> str:
    return "\n".join(line.render() for line in lines) or "(aucun message)"


def render_hits(hits: Sequence[ItemHit]) -> str:
    return "\n".join(f"- {one_line(hit.item.content)}" for hit in hits) or "(rien)"


def tone_hint(texts: Sequence[str]) -> str:
    """The tone the recent conversation calls for (the model may choose otherwise)."""
    joined = " ".join(texts[-5:])
    if _TECHNICAL.search(joined):
        return "technical"
    if _HELP.search(joined):
        return "helpful"
    return "playful"


def lobby_keys(room_id: str) -> list[str]:
    """What the lobby's reflection may read: the lobby's memory and global, never anyone's
    private scope (it speaks in front of everyone)."""
    return [room_key(room_id), GLOBAL]


async def around(
    items: MemoryItems, *, room_id: str, query: str, kind: str, k: int
) -> list[ItemHit]:
    """Items of one kind ("fact" or "self") closest to `query` in the lobby's scopes."""
    return await items.search(keys=lobby_keys(room_id), query=query, kinds=[kind], k=k)
