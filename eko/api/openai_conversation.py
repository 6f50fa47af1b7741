"""Which room an OpenAI client's request belongs to, and what of it Eko must store first.

Stateless clients send the whole conversation with each request: instructions (`system` /
`developer` messages), earlier turns (`user` / `assistant`, with its `tool_calls`, `tool`
results), then the new input: a user message, or the results of the tools the last reply
called (one `tool` message per call). The conversation is identified by its earlier turns:
their fingerprint is the sha256 of the JSON list of `[role, content]` pairs (plus an
assistant turn's tool calls as `[name, arguments]`, ids and spacing left out), content
stripped of surrounding whitespace, system and developer messages left out (changing the
instructions does not start a new conversation). Tool results are stored as the user's turn,
as text naming the call they answer (`[tool result <id>: <name>]`), so that every model
reads them.
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
from typing import Any

from eko.api.schemas.openai import InputMessage, OpenAIError, message_text
from eko.llm.caller_format import call_function
from eko.store import conversations as conversation_repo
from eko.store import messages as message_repo
from eko.store import rooms as room_repo
from eko.store.db import Database
from eko.store.models import Room, User

INSTRUCTION_ROLES = ("system", "developer")
TURN_ROLES = ("user", "assistant", "tool")


@dataclass(frozen=True, slots=True)
class ConversationTurn:
    role: str  # user | assistant | tool
    content: str
    # An assistant turn's tool calls (OpenAI's shape); a tool turn's call id.
    tool_calls: tuple[dict[str, Any], ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class Conversation:
    """A request's messages, split: instructions, earlier turns, the new input — the user's
    message, or the results of the tools the previous reply called."""

    instructions: str | None
    earlier: tuple[ConversationTurn, ...]
    new: tuple[ConversationTurn, ...]

    @property
    def message(self) -> str:
        """The new input as Eko stores it: the user's text, or the tool results as text."""
        if self.new[0].role == "user":
            return self.new[0].content
        return "\n\n".join(tool_result_text(turn, self.earlier) for turn in self.new)

    @property
    def tool_results(self) -> list[dict[str, Any]] | None:
        """The new input's tool results, as sent (kept with the stored message)."""
        if self.new[0].role != "tool":
            return None
        return [{"tool_call_id": t.tool_call_id, "content": t.content} for t in self.new]

    def head_after(self, reply: str, tool_calls: Sequence[dict[str, Any]] = ()) -> str:
        """The fingerprint of the conversation once `reply` answers the new input."""
        return fingerprint(
            (
                *self.earlier,
                *self.new,
                ConversationTurn("assistant", reply, tuple(tool_calls)),
            )
        )


def split(messages: Sequence[InputMessage]) -> Conversation:
    """Raises (OpenAI's 400) for what Eko cannot keep: a last message that is neither the
    user's nor a tool's result, a legacy `function` message."""
    last = len(messages) - 1
    start = last
    while messages[last].role == "tool" and start > 0 and messages[start - 1].role == "tool":
        start -= 1
    if messages[last].role not in ("user", "tool"):
        raise OpenAIError(
            400,
            "The last message must be the user's (or the results of the tools the assistant "
            "called): it is the new input Eko answers.",
            param=f"messages[{last}].role",
        )
    instructions: list[str] = []
    turns: list[ConversationTurn] = []
    for index, message in enumerate(messages):
        text = message_text(message, index).strip()
        if message.role in INSTRUCTION_ROLES:
            if text:
                instructions.append(text)
        elif message.role in TURN_ROLES:
            turns.append(
                ConversationTurn(
                    message.role,
                    text,
                    tuple(message.tool_calls or ()) if message.role == "assistant" else (),
                    message.tool_call_id if message.role == "tool" else None,
                )
            )
        else:
            raise OpenAIError(
                400,
                f"messages[{index}] is a {message.role!r} message (the legacy function call): "
                "send tool calls as `tool_calls` and their results as `tool` messages.",
                param=f"messages[{index}].role",
                code="unsupported_role",
            )
    count = last - start + 1
    return Conversation(
        instructions="\n\n".join(instructions) or None,
        earlier=tuple(turns[:-count]),
        new=tuple(turns[-count:]),
    )


def tool_result_text(turn: ConversationTurn, earlier: Sequence[ConversationTurn]) -> str:
    """A tool's result as the model reads it, named after the call it answers."""
    name = next(
        (
            call_function(call).get("name")
            for t in earlier
            for call in t.tool_calls
            if call.get("id") == turn.tool_call_id
        ),
        None,
    )
    return f"[tool result {turn.tool_call_id or ''}: {name or 'tool'}]\n{turn.content}"


def fingerprint(turns: Sequence[ConversationTurn]) -> str:
    canonical = json.dumps(
        [_canonical(turn) for turn in turns],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def _canonical(turn: ConversationTurn) -> list[Any]:
    """[role, content], and an assistant turn's tool calls as [name, arguments] pairs (their
    ids and the arguments' spacing left out: clients re-serialise them)."""
    pair: list[Any] = [turn.role, turn.content.strip()]
    if turn.tool_calls:
        pair.append([_canonical_call(call) for call in turn.tool_calls])
    return pair


def _canonical_call(call: dict[str, Any]) -> list[Any]:
    function = call_function(call)
    raw = function.get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        arguments = raw.strip() if isinstance(raw, str) else raw
    return [function.get("name"), json.dumps(arguments, sort_keys=True, ensure_ascii=False)]


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
        if not turn.content and not turn.tool_calls:
            continue  # nothing to keep (its place still counts in the fingerprint)
        tool = turn.role == "tool"  # kept as the user's turn, as the new input's results are
        await message_repo.append_message(
            database,
            room_id=room.id,
            role="user" if tool else turn.role,
            content=tool_result_text(turn, conversation.earlier) if tool else turn.content,
            tool_calls=[dict(call) for call in turn.tool_calls] or None,
            dedupe_key=f"openai-import:{room.id}:{index}",
            sender_id=None if turn.role == "assistant" else user.id,
            meta={"imported": True, **({"tool_results": [turn.tool_call_id]} if tool else {})},
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


# Where an explicit room is named: the X-Eko-Room header or the body's metadata.
_ROOM_PARAM = "metadata.eko_room"


async def explicit_room(database: Database, *, user: User, persona: str, room_id: str) -> Room:
    """The room named by `X-Eko-Room` / `metadata.eko_room`: one of this key's direct rooms
    that speaks as `persona` (else OpenAI's 404 or 400)."""
    async with database.session() as session:
        room = await room_repo.get_room(session, room_id=room_id)
        visible = room is not None and (
            user.role == "staff"
            or await room_repo.is_member(session, room_id=room_id, user_id=user.id)
        )
    if room is None or not visible:
        raise OpenAIError(
            404, f"No room {room_id!r} for this key.", param=_ROOM_PARAM, code="room_not_found"
        )
    if room.kind != "direct":
        raise OpenAIError(
            400,
            f"Room {room_id!r} is a lobby, where Eko answers only when named: use a direct room.",
            param=_ROOM_PARAM,
            code="not_a_direct_room",
        )
    if room.persona != persona:
        raise OpenAIError(
            400,
            f"Room {room_id!r} speaks as {room.persona!r}: use model {room.persona!r}.",
            param="model",
            code="model_room_mismatch",
        )
    return room
