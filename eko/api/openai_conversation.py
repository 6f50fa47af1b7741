"""Which room an OpenAI client's request belongs to, and what of it Eko must store first.

Stateless clients send the whole conversation with each request: instructions (`system` /
`developer` messages), earlier turns (`user` / `assistant`), then the new user message. The
conversation is identified by its earlier turns: their fingerprint is the sha256 of the JSON
list of `[role, content]` pairs, content stripped of surrounding whitespace, system and
developer messages left out (changing the instructions does not start a new conversation).
After each exchange the room's head becomes the fingerprint of its turns up to the reply
(eko/store/conversations.py), so the next request of the same conversation finds the room
and only its new message is stored.

- No earlier turns: a new conversation, a new room.
- Earlier turns that are some room's head: that room (claimed until the reply is stored, so
  that two requests continuing the same turns at once do not share it).
- Earlier turns Eko does not know (a client that kept its own history, an edited or
  regenerated turn): a new room, into which those turns are imported first, as history (not
  answered, not counted against the quota, `imported: true` in their metadata).
- An explicit room (`X-Eko-Room`, or `metadata.eko_room`): that room, whose stored history is
  the conversation; the request's earlier turns are not stored again.

The instructions are kept on the room (`rooms.instructions`), replaced by each request's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from eko.api.schemas.openai import InputMessage, OpenAIError, message_text
from eko.store import conversations as conversation_repo
from eko.store import messages as message_repo
from eko.store import rooms as room_repo
from eko.store.db import Database
from eko.store.models import Room, User

INSTRUCTION_ROLES = ("system", "developer")
TURN_ROLES = ("user", "assistant")


@dataclass(frozen=True, slots=True)
class ConversationTurn:
    role: str
    content: str


@dataclass(frozen=True, slots=True)
class Conversation:
    """A request's messages, split: instructions, earlier turns, the new message."""

    instructions: str | None
    earlier: tuple[ConversationTurn, ...]
    message: str

    def head_after(self, reply: str) -> str:
        """The fingerprint of the conversation once `reply` answers the new message."""
        return fingerprint(
            (
                *self.earlier,
                ConversationTurn("user", self.message),
                ConversationTurn("assistant", reply),
            )
        )


def split(messages: Sequence[InputMessage]) -> Conversation:
    """Raises (OpenAI's 400) for what Eko cannot keep: tool turns, a last message not the
    user's."""
    last = len(messages) - 1
    if messages[last].role != "user":
        raise OpenAIError(
            400,
            "The last message must be the user's: it is the new input Eko answers.",
            param=f"messages[{last}].role",
        )
    instructions: list[str] = []
    earlier: list[ConversationTurn] = []
    for index, message in enumerate(messages[:last]):
        text = message_text(message, index).strip()
        if message.role in INSTRUCTION_ROLES:
            if text:
                instructions.append(text)
        elif message.role in TURN_ROLES:
            earlier.append(ConversationTurn(message.role, text))
        else:
            raise OpenAIError(
                400,
                f"messages[{index}] is a {message.role!r} message: Eko has no tools, so it "
                "cannot keep tool results in a conversation.",
                param=f"messages[{index}].role",
                code="unsupported_role",
            )
    return Conversation(
        instructions="\n\n".join(instructions) or None,
        earlier=tuple(earlier),
        message=message_text(messages[last], last),
    )


def fingerprint(turns: Sequence[ConversationTurn]) -> str:
    canonical = json.dumps(
        [[turn.role, turn.content.strip()] for turn in turns],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


async def conversation_room(
    database: Database,
    *,
    user: User,
    persona: str,
    conversation: Conversation,
    room_name: str,
    idempotency_key: str | None = None,
) -> Room:
    """The room of this conversation (see the module's docstring), its earlier turns stored.
    A request retried with its Idempotency-Key goes to the room it went to the first time."""
    request = (
        hashlib.sha256(
            f"{idempotency_key}\n{fingerprint(conversation.earlier)}".encode(
                "utf-8", "surrogatepass"
            )
        ).hexdigest()
        if idempotency_key
        else None
    )
    room_id = None
    if request is not None:
        room_id = await conversation_repo.retried(
            database, user_id=user.id, persona=persona, request=request
        )
    if room_id is None and conversation.earlier:
        room_id = await conversation_repo.claim(
            database,
            user_id=user.id,
            persona=persona,
            fingerprint=fingerprint(conversation.earlier),
            request=request,
        )
    if room_id is not None:
        async with database.session() as session:
            room = await room_repo.get_room(session, room_id=room_id)
        if room is not None:
            return room
    async with database.session() as session:
        room = await room_repo.create_room(
            session, kind="direct", name=room_name, persona=persona, created_by=user.id
        )
    await conversation_repo.set_head(
        database,
        room_id=room.id,
        user_id=user.id,
        persona=persona,
        fingerprint=conversation_repo.claim_marker(),
        request=request,
    )
    for index, turn in enumerate(conversation.earlier):
        if not turn.content:
            continue  # nothing to keep (its place still counts in the fingerprint)
        await message_repo.append_message(
            database,
            room_id=room.id,
            role=turn.role,
            content=turn.content,
            dedupe_key=f"openai-import:{room.id}:{index}",
            sender_id=user.id if turn.role == "user" else None,
            meta={"imported": True},
        )
    return room


async def keep_instructions(database: Database, room: Room, instructions: str | None) -> Room:
    """The room with this request's instructions (stored when they changed)."""
    if room.instructions == instructions:
        return room
    async with database.session() as session:
        stored = await room_repo.get_room(session, room_id=room.id)
        if stored is not None:
            stored.instructions = instructions
    room.instructions = instructions
    return room
