"""Node A, tool.db_load_context: the additional context block at the decided level."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from eko.chat.engine.context_loader import ChatContext, ContextLoader, HistoryItem
from eko.chat.engine.registry import NodeContext, NodeOutput, NodeResult, NodeSpec, WriterSection
from eko.chat.engine.writer import PROFILE_SECTION_TITLE
from eko.guard.utterance import refers_to_user

NODE_ID = "A"
NODE_TYPE = "tool.db_load_context"
# Per message of extended history in the writer's prompt.
_EXTENDED_MESSAGE_CHARS = 240


def context_node(loader: ContextLoader, *, timeout_s: float) -> NodeSpec:
    async def run(context: NodeContext, _inputs: Mapping[str, NodeResult]) -> NodeOutput:
        level = context.decision.context_level
        ctx = context.ctx
        extended = await loader.extended_history(ctx, room_id=context.turn.room.id, level=level)
        sources: list[str] = []
        if ctx.facts:
            # In the prompt: the answer is for this user alone (eko.guard.validation), and
            # never cached when the writer's answer repeats one of them (answer_uses_facts).
            sources.append("facts")
        if refers_to_user(context.turn.user_message.content):
            # "my …", "am I …", "mon …": the answer depends on who asks: never cached.
            sources.append("about_the_user")
        if extended:
            sources.append("extended_history")
        text = render_user_context(ctx, level=level, extended=extended)
        return NodeOutput(
            data={
                "context_level": level,
                "facts_count": len(ctx.facts),
                "extended_history_count": len(extended),
            },
            section=WriterSection(
                title=PROFILE_SECTION_TITLE,
                text=text,
                priority=30,
                personal=bool(sources),
                personal_sources=tuple(sources),
            ),
            value={"facts_store": ctx.facts_store(), "extended_history": len(extended)},
        )

    return NodeSpec(
        id=NODE_ID,
        type=NODE_TYPE,
        description="loads the user's context (profile, facts; more history at medium/max)",
        run=run,
        timeout_s=timeout_s,
        inputs=lambda decision: {"context_level": decision.context_level},
    )


def render_user_context(ctx: ChatContext, *, level: str, extended: list[HistoryItem]) -> str:
    profile = ctx.user_profile
    # The first name the user gave (a fact), never the account's display name: an answer that
    # saw no private data can be shared (see personal_context).
    lines = [f"name: {profile.get('first_name') or 'unknown'}"]
    for key in ("use_tu_form", "main_city", "main_activity", "locale_main", "timezone"):
        value = ctx.settings.get(key)
        if value is not None:
            lines.append(f"{key}: {_value(value)}")
    status = ctx.user_status
    lines.append(f"plan: {'pro' if status.is_pro else 'free'} (quota state: {status.state})")
    facts = [
        f"- {fact.fact_key}: {_value(fact.value)}"
        + (" (estimated)" if fact.is_estimated else "")
        + (f" [{fact.confidence:.1f}]" if fact.confidence < 1 else "")
        for fact in ctx.facts
    ]
    if facts:
        lines.append("known facts:")
        lines += facts
    if level in ("medium", "max"):
        report = ctx.capabilities
        lines.append(f"agents: {', '.join(report.active_agents) or 'none'}")
        lines.append(f"connected services: {', '.join(report.connected_services) or 'none'}")
    if extended:
        lines.append("earlier in this conversation:")
        for item in extended:
            text = " ".join(item.content.split())[:_EXTENDED_MESSAGE_CHARS]
            lines.append(f"- {item.role} ({item.sent_at[:10]}): {text}")
    return "\n".join(lines)


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
