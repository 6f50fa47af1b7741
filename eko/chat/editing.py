"""Edit and resend: the person's last message gets a new version (the old one kept), then its
reply is written again for the new text (the old reply kept as a version too)."""

from __future__ import annotations

from dataclasses import replace

from eko.chat.answering import reply_dedupe_key
from eko.chat.pipeline import Turn
from eko.chat.service import ChatService, Exchange
from eko.chat.streaming import LiveReply
from eko.store import message_edits
from eko.store import messages as message_repo
from eko.store.db import Database


class NoReplyYet(ValueError):
    """The message has no stored reply (still being written, or never answered)."""


async def edit_and_resend(
    chat: ChatService,
    database: Database,
    turn: Turn,
    content: str,
    *,
    live: LiveReply | None = None,
) -> Exchange:
    """Validate `content` as a new message, store it as the new version of `turn`'s user
    message (counted against the quota; raises NotEditable past the room's last exchange),
    then regenerate its reply. Raises EmptyMessage / MessageTooLong / NoReplyYet first,
    nothing stored."""
    text = chat.validate(content)
    if chat.live.get(turn.user_message.id) is not None:
        raise NoReplyYet(turn.user_message.id)
    async with database.session() as session:
        reply = await message_repo.get_by_dedupe_key(
            session, dedupe_key=reply_dedupe_key(turn.user_message.id)
        )
    if reply is None:
        raise NoReplyYet(turn.user_message.id)
    edited = await message_edits.edit_user_message(
        database, message_id=turn.user_message.id, content=text
    )
    updated = await chat.regenerate(replace(turn, user_message=edited), reply, live=live)
    return Exchange(edited, updated, created=False)
