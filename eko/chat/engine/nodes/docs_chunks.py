"""Node S, tool.docs_chunks: chunks of the selected docs scopes, by similarity to the message.

Hard caps (seed): 3 scopes, 8 chunks per scope, 20 chunks in all; then the writer's character
budget decides how many of them fit in its prompt. The room's own scope (its attachments) is
searched for this room only, and its chunks are labelled as the attached file they come from.
"""

from __future__ import annotations

from collections.abc import Mapping

import structlog

from eko.chat.docs.service import DocHit, DocsService, is_room_scope
from eko.chat.engine.registry import NodeContext, NodeOutput, NodeResult, NodeSpec, WriterSection
from eko.chat.engine.writer import DOCS_SECTION_TITLE

log = structlog.get_logger("eko.chat")

NODE_ID = "S"
NODE_TYPE = "tool.docs_chunks"


def docs_chunks_node(docs: DocsService, *, max_chars: int, timeout_s: float) -> NodeSpec:
    async def run(context: NodeContext, _inputs: Mapping[str, NodeResult]) -> NodeOutput:
        scopes = list(context.inputs.get("scopes") or [])
        if not scopes:
            return NodeOutput(skipped_reason="no docs scope selected")
        hits = await docs.search(
            context.turn.user_message.content, scopes=scopes, room_id=context.turn.room.id
        )
        blocks: list[str] = []
        used = 0
        for hit in hits:
            block = f"{_label(hit)}\n{hit.content}"
            if used + len(block) > max_chars:
                if not blocks:  # always at least one, cut to the budget
                    blocks.append(block[:max_chars])
                break
            blocks.append(block)
            used += len(block) + 2
        log.info(
            "chat.docs_chunks.db",
            scopes=scopes,
            rows_count=len(hits),
            chunks_count=len(blocks),
        )
        data = {
            "scopes": scopes,
            "rows_count": len(hits),
            "chunks_count": len(blocks),
            "chunks": [
                {"id": h.chunk_id, "scope": h.scope, "source": h.source, "score": h.score}
                for h in hits[: len(blocks)]
            ],
        }
        if not blocks:
            return NodeOutput(data=data, skipped_reason="no chunk found in the selected scopes")
        return NodeOutput(
            data=data,
            section=WriterSection(title=DOCS_SECTION_TITLE, text="\n\n".join(blocks), priority=10),
            value=hits[: len(blocks)],
        )

    return NodeSpec(
        id=NODE_ID,
        type=NODE_TYPE,
        description="retrieves product documentation chunks from 1-3 selected scopes",
        run=run,
        timeout_s=timeout_s,
        include=lambda decision: decision.scope_need,
        inputs=lambda decision: {"scopes": list(decision.scopes_selected)},
    )


def _label(hit: DocHit) -> str:
    where = "attached file" if is_room_scope(hit.scope) else hit.scope
    return f"[{where} · {hit.source}" + (f" › {hit.title}]" if hit.title else "]")
