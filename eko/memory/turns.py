"""Messages → turns → text, with each tool call linked to its reasoning (the seed's format).

A turn is one non-assistant message and the assistant messages that follow it (a lobby turn
may have no answer; a message the assistant posts on its own opens a turn of its own). The same
rendering feeds the L1 summary input (`render_turn`, each turn whole: the summarizer splits a
long segment into parts rather than cutting it, see summaries/calls.py) and the "Recent
Conversation" block of the dual context (`render_turns` with a budget).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from eko.memory.text import clip, one_line
from eko.store.models import Message, Room, User

# A tool result is shown as one short line: the summary needs the outcome, not the payload.
MAX_RESULT_CHARS = 160
MAX_ARGUMENTS_CHARS = 200
# No message is cut below this when a block is squeezed into a budget.
MIN_MESSAGE_CHARS = 60


class ChatTurn(Protocol):
    """What the memory hooks read from the chat pipeline's Turn (eko.chat.pipeline.Turn fits;
    memory sits below chat and does not import it)."""

    @property
    def user(self) -> User: ...

    @property
    def room(self) -> Room: ...

    @property
    def user_message(self) -> Message: ...


@dataclass(slots=True)
class ConversationTurn:
    messages: list[Message] = field(default_factory=list)

    @property
    def first_seq(self) -> int:
        return self.messages[0].seq

    @property
    def char_start(self) -> int:
        first = self.messages[0]
        return first.char_end - first.char_count

    @property
    def created_at(self) -> datetime:
        return self.messages[0].created_at


def group_turns(messages: Sequence[Message]) -> list[ConversationTurn]:
    """Chronological messages → chronological turns."""
    turns: list[ConversationTurn] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "assistant" and turns and _open_for_answer(turns[-1]):
            turns[-1].messages.append(message)
        else:
            turns.append(ConversationTurn(messages=[message]))
    return turns


def _open_for_answer(turn: ConversationTurn) -> bool:
    # An assistant message joins a turn that started with someone else's message.
    return turn.messages[0].role != "assistant"


@dataclass(frozen=True, slots=True)
class TurnStyle:
    """ "summary": the L1 input (quoted lines, Reasoning:/Tools: blocks).
    "context": the dual context ([reasoning: …] / [tools: … → …] lines)."""

    mode: str = "context"
    assistant_label: str = "Assistant"
    show_time: bool = True


def render_turns(
    turns: Sequence[ConversationTurn],
    names: Mapping[int, str],
    *,
    style: TurnStyle,
    max_chars: int | None = None,
) -> str:
    """The turns as text; with max_chars (the dual context's recent block), every message is
    cut to the same largest cap that fits, and if even the smallest cap overflows only the
    most recent characters are kept. Summaries never pass max_chars (see render_turn)."""
    cap = None
    if max_chars is not None:
        cap = _fitting_cap(turns, names, style, max_chars)
    text = "\n\n".join(_render_turn(turn, names, style, cap) for turn in turns)
    if max_chars is not None and len(text) > max_chars:
        # Even at the smallest cap the headers alone overflow: keep the most recent part.
        text = "…" + text[-(max_chars - 1) :]
    return text


def _fitting_cap(
    turns: Sequence[ConversationTurn], names: Mapping[int, str], style: TurnStyle, max_chars: int
) -> int | None:
    def size(cap: int | None) -> int:
        return sum(len(_render_turn(t, names, style, cap)) for t in turns) + 2 * (len(turns) - 1)

    if size(None) <= max_chars:
        return None
    longest = max((len(m.content) for t in turns for m in t.messages), default=0)
    low, high = MIN_MESSAGE_CHARS, max(MIN_MESSAGE_CHARS, longest)
    while low < high:  # the largest per-message cap that fits
        middle = (low + high + 1) // 2
        if size(middle) <= max_chars:
            low = middle
        else:
            high = middle - 1
    return low


def render_turn(turn: ConversationTurn, names: Mapping[int, str], style: TurnStyle) -> str:
    """One turn as text, whole."""
    return _render_turn(turn, names, style, None)


def _render_turn(
    turn: ConversationTurn, names: Mapping[int, str], style: TurnStyle, cap: int | None
) -> str:
    header = f"Turn {turn.first_seq}"
    if style.show_time:
        header += f" ({turn.created_at:%Y-%m-%d %H:%M})"
    lines = [header + ":"]
    for message in turn.messages:
        content = one_line(message.content)
        if cap is not None:
            content = clip(content, cap)
        lines.append(f'{_speaker(message, names, style)}: "{content}"')
        if message.role == "assistant":
            lines.extend(_reasoning_and_tools(message, style, cap))
    return "\n".join(lines)


def _speaker(message: Message, names: Mapping[int, str], style: TurnStyle) -> str:
    if message.role == "assistant":
        return style.assistant_label
    name = names.get(message.sender_id) if message.sender_id is not None else None
    return f"User ({one_line(name)})" if name else "User"


def _reasoning_and_tools(message: Message, style: TurnStyle, cap: int | None) -> list[str]:
    lines: list[str] = []
    reasoning = one_line(message.reasoning or "")
    if cap is not None:
        reasoning = clip(reasoning, cap)
    calls = [call for call in (message.tool_calls or []) if isinstance(call, Mapping)]
    if style.mode == "summary":
        if reasoning:
            lines.append(f'Reasoning: "{reasoning}"')
        if calls:
            lines.append("Tools:")
            for call in calls:
                tool = ToolCallView.of(call)
                lines.append(f"  - {tool.signature}")
                if tool.reasoning:
                    lines.append(f'    Why: "{tool.reasoning}"')
                lines.append(f"    → {tool.outcome}")
        return lines
    if reasoning:
        lines.append(f"[reasoning: {reasoning}]")
    for call in calls:
        tool = ToolCallView.of(call)
        why = f" (why: {tool.reasoning})" if tool.reasoning else ""
        lines.append(f"[tools: {tool.signature}{why} → {tool.outcome}]")
    return lines


@dataclass(frozen=True, slots=True)
class ToolCallView:
    """One stored tool call, whatever shape its writer used (the seed's ToolCall fields:
    tool_name, arguments, reasoning, result, success; `name`/`args`/`ok`/`error` accepted)."""

    signature: str
    reasoning: str
    outcome: str

    @classmethod
    def of(cls, call: Mapping[str, Any]) -> ToolCallView:
        name = str(call.get("tool_name") or call.get("name") or call.get("tool") or "tool")
        arguments = call.get("arguments", call.get("args"))
        if isinstance(arguments, str):
            with contextlib.suppress(ValueError):
                arguments = json.loads(arguments)
        if isinstance(arguments, Mapping):
            rendered = ", ".join(
                f"{key}={json.dumps(value, ensure_ascii=False, default=str)}"
                for key, value in arguments.items()
            )
        elif arguments is None:
            rendered = ""
        else:
            rendered = json.dumps(arguments, ensure_ascii=False, default=str)
        signature = f"{name}({clip(rendered, MAX_ARGUMENTS_CHARS)})"
        success = call.get("success", call.get("ok"))
        error = call.get("error")
        result = call.get("result", call.get("output"))
        if success is False or (success is None and error):
            detail = error if error is not None else result
            outcome = "Failed" + (f": {_short(detail)}" if detail is not None else "")
        elif result is not None:
            outcome = f"Success: {_short(result)}"
        else:
            outcome = "Success" if success else "done"
        reasoning = one_line(str(call.get("reasoning") or ""))
        return cls(signature=signature, reasoning=reasoning, outcome=outcome)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return clip(one_line(text), MAX_RESULT_CHARS)
