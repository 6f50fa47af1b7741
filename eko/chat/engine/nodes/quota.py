"""Node B, tool.quota_check: the user's quota status, re-read at this turn."""

from __future__ import annotations

from collections.abc import Mapping

from eko.chat.engine.quota import load_quota
from eko.chat.engine.registry import NodeContext, NodeOutput, NodeResult, NodeSpec, WriterSection
from eko.prompts.library import PromptLibrary
from eko.store.db import Database

NODE_ID = "B"
NODE_TYPE = "tool.quota_check"


def quota_node(database: Database, prompts: PromptLibrary, *, timeout_s: float) -> NodeSpec:
    async def run(context: NodeContext, _inputs: Mapping[str, NodeResult]) -> NodeOutput:
        async with database.session() as session:
            status = await load_quota(session, user_id=context.turn.user.id)
        if status is None:
            raise LookupError("user not found")
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
