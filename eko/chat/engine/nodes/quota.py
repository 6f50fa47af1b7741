"""Node B, tool.quota_check: the user's quota status at this turn (as the context loader read
it with the user, after this message was counted: no second read)."""

from __future__ import annotations

from collections.abc import Mapping

from eko.chat.engine.registry import NodeContext, NodeOutput, NodeResult, NodeSpec, WriterSection
from eko.prompts.library import PromptLibrary

NODE_ID = "B"
NODE_TYPE = "tool.quota_check"


def quota_node(prompts: PromptLibrary, *, timeout_s: float) -> NodeSpec:
    async def run(context: NodeContext, _inputs: Mapping[str, NodeResult]) -> NodeOutput:
        status = context.ctx.user_status
        section = None
        if status.state == "warn_last_free":
            section = WriterSection(
                title="Quota", text=prompts.text("writer/quota_warn_last_free.md"), priority=40
            )
        return NodeOutput(data=status.to_meta(), section=section, value=status)

    return NodeSpec(
        id=NODE_ID,
        type=NODE_TYPE,
        description="reads the free quota state (normal / warn_last_free / blocked)",
        run=run,
        timeout_s=timeout_s,
    )
