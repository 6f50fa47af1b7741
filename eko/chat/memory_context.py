"""Node M, tool.memory_context: the memory layer's dual context, handed to the response writer.

The writer already sends the recent turns as chat messages, so its section carries the other
half of the dual context: the summaries retrieved over the room's history (RAG, minus those
that only cover the recent window) and the facts / self-knowledge this user may see here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from eko.chat.engine.registry import NodeContext, NodeOutput, NodeResult, NodeSpec, WriterSection
from eko.memory.budget import share_reader_room
from eko.memory.context import DualContextBuilder

NODE_ID = "M"
NODE_TYPE = "tool.memory_context"
SECTION_TITLE = "Memory (earlier in this conversation, and what you know)"
# After docs (10), web (20) and the user's profile (30).
SECTION_PRIORITY = 35


@dataclass(frozen=True, slots=True)
class ReaderRoom:
    """The prompt room of the model that will read the writer's prompt (ResponseWriter):
    `room` — the characters the conversation may take (None: no limit) — and `sent_chars`,
    the characters one recent message takes there."""

    room: Callable[[NodeContext], int | None]
    sent_chars: Callable[[str], int]


def memory_context_node(
    builder: DualContextBuilder,
    *,
    timeout_s: float,
    reader: ReaderRoom | None = None,
) -> NodeSpec:
    """`reader`: the room the model that reads the prompt leaves for the conversation (None:
    the configured budget). It is shared by one rule (eko/memory/budget.share_reader_room):
    the recent window narrowed to its share (the writer then sends it from there), memory
    selects what fits the rest, and nothing it selected is cut afterwards."""

    async def run(context: NodeContext, _inputs: Mapping[str, NodeResult]) -> NodeOutput:
        window = context.ctx.recent
        room = reader.room(context) if reader is not None else None
        past_max_chars: int | None = None
        reader_data: dict[str, int] = {}
        if room is not None and reader is not None and window is None:
            past_max_chars = room  # no window read for this message: memory has it all
        elif room is not None and reader is not None and window is not None:
            share = share_reader_room(builder.rule, room)
            full = window
            window = builder.recent.newest(
                full, share.recent, lambda message: reader.sent_chars(message.content)
            )
            recent_used = sum(reader.sent_chars(m.content) for m in window.messages)
            past_max_chars = share.past(recent_used)
            reader_data = {
                "room_chars": room,
                "recent_chars": recent_used,
                "recent_turns_to_memory": len(full.turns) - len(window.turns),
            }
        # The window the writer sends (read once for this message): memory covers the rest.
        dual = await builder.build_for_turn(context.turn, window, past_max_chars=past_max_chars)
        stats = dual.stats
        data = {
            "recent_turns": stats.get("recent_turns", 0),
            "summaries": len(dual.parts.summaries),
            "summary_levels": stats.get("summary_levels", []),
            "items": len(dual.parts.items),
            "chars": stats.get("chars", 0),
        }
        if past_max_chars is not None:
            data["budget_chars"] = past_max_chars
            data.update(reader_data)
        start = window.first_seq if window is not None and reader_data else None
        if "embedding_error" in stats:
            data["embedding_error"] = stats["embedding_error"]
        multihop = stats.get("multihop", {})
        if "phrases" in multihop:  # the one model call of a question needing several pieces
            data["expanded"] = len(multihop["phrases"])
        if "expand_error" in multihop:
            data["expand_error"] = multihop["expand_error"]
        text = dual.past_text()
        if not text:
            return NodeOutput(
                data=data, skipped_reason="nothing relevant remembered", recent_from_seq=start
            )
        sources = tuple(
            name
            for name, present in (
                ("memory_facts", bool(dual.parts.items)),
                ("history_summaries", bool(dual.parts.summaries)),
            )
            if present
        )
        return NodeOutput(
            data=data,
            section=WriterSection(
                title=SECTION_TITLE,
                text=text,
                priority=SECTION_PRIORITY,
                personal=True,
                personal_sources=sources,
            ),
            value=dual,
            recent_from_seq=start,
        )

    return NodeSpec(
        id=NODE_ID,
        type=NODE_TYPE,
        description="retrieves relevant past summaries of this room and remembered facts",
        run=run,
        timeout_s=timeout_s,
    )
