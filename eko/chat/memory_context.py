"""Node M, tool.memory_context: the memory layer's dual context, handed to the response writer.

The writer already sends the recent turns as chat messages, so its section carries the other
half of the dual context: the summaries retrieved over the room's history (RAG, minus those
that only cover the recent window) and the facts / self-knowledge this user may see here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from eko.chat.engine.registry import NodeContext, NodeOutput, NodeResult, NodeSpec, WriterSection
from eko.memory.context import DualContextBuilder

NODE_ID = "M"
NODE_TYPE = "tool.memory_context"
SECTION_TITLE = "Memory (earlier in this conversation, and what you know)"
# After docs (10), web (20) and the user's profile (30).
SECTION_PRIORITY = 35


def memory_context_node(
    builder: DualContextBuilder,
    *,
    timeout_s: float,
    room: Callable[[NodeContext], int | None] | None = None,
) -> NodeSpec:
    """`room`: the characters the section may take in the prompt of the model that reads it
    (ResponseWriter.memory_room; None: the configured budget): memory selects what fits, and
    nothing it selected is cut afterwards."""

    async def run(context: NodeContext, _inputs: Mapping[str, NodeResult]) -> NodeOutput:
        past_max_chars = room(context) if room is not None else None
        # The window the writer sends (read once for this message): memory covers the rest.
        dual = await builder.build_for_turn(
            context.turn, context.ctx.recent, past_max_chars=past_max_chars
        )
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
        if "embedding_error" in stats:
            data["embedding_error"] = stats["embedding_error"]
        multihop = stats.get("multihop", {})
        if "phrases" in multihop:  # the one model call of a question needing several pieces
            data["expanded"] = len(multihop["phrases"])
        if "expand_error" in multihop:
            data["expand_error"] = multihop["expand_error"]
        text = dual.past_text()
        if not text:
            return NodeOutput(data=data, skipped_reason="nothing relevant remembered")
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
        )

    return NodeSpec(
        id=NODE_ID,
        type=NODE_TYPE,
        description="retrieves relevant past summaries of this room and remembered facts",
        run=run,
        timeout_s=timeout_s,
    )
