"""Who said a turn: the name a stored message is shown (and embedded) under."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sqlalchemy import inspect, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.message_search import query_words
from eko.store.models import Message, RoomMember, User

# A user message whose sender is gone (or never had one).
UNKNOWN_SPEAKER = "User"


async def speaker_names(session: AsyncSession, messages: Iterable[Message]) -> dict[int, str]:
    """The display names of the messages' senders, by user id (one query)."""
    ids = {m.sender_id for m in messages if m.sender_id is not None}
    if not ids:
        return {}
    rows = await session.execute(select(User.id, User.display_name).where(User.id.in_(ids)))
    return {row[0]: row[1] for row in rows}


def speaker_of(
    message: Message,
    names: Mapping[int, str],
    assistant_name: str,
    *,
    named: Mapping[str, str] | None = None,
) -> str:
    """An imported turn's own speaker name first (from `named`, by message id — turn_recall
    reads it with the turns — or from its metadata when loaded), then the assistant's name or
    the sender's."""
    if named is not None and message.id in named:
        return named[message.id]
    if "meta" not in inspect(message).unloaded:
        own = (message.meta or {}).get("speaker")
        if isinstance(own, str) and own:
            return own
    if message.role == "assistant":
        return assistant_name
    return names.get(message.sender_id or 0, UNKNOWN_SPEAKER)


@dataclass(frozen=True, slots=True)
class RoomSpeakers:
    """The room's members (user id -> display name) and the assistant's name."""

    members: Mapping[int, str]
    assistant_name: str

    def words(self) -> set[str]:
        """The words of the speakers' names, as the full-text query spells them: a turn's
        speaker is not among its words — "what did Caroline research?" should search for
        "research", not for the turns that greet Caroline (the turn vectors carry the speaker
        instead: eko.memory.turn_index)."""
        names = [self.assistant_name, *self.members.values()]
        return {word for name in names for word in query_words(name)}

    def named_member(self, query: str) -> int | None:
        """The one member the query names (a word of their name among its words), or None
        when it names none or several: "what books has Melanie read?" is answered by what
        Melanie said."""
        words = set(query_words(query))
        named = [uid for uid, name in self.members.items() if words & set(query_words(name))]
        return named[0] if len(named) == 1 else None


async def room_speakers(
    session: AsyncSession, *, room_id: str, assistant_name: str
) -> RoomSpeakers:
    rows = await session.execute(
        select(User.id, User.display_name)
        .join(RoomMember, RoomMember.user_id == User.id)
        .where(RoomMember.room_id == room_id)
    )
    return RoomSpeakers({row[0]: row[1] for row in rows}, assistant_name)
