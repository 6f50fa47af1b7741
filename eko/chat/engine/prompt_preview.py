"""The response writer's prompt for a message, rendered as the engine would, with no model call.

    context loader (as for an answer) -> the orchestrator's deterministic decision (a general
    question at light context: what the engine decides when no model answers; or the one
    given) -> every node of the plan but the writer, run by the executor (the memory section
    sized by ResponseWriter.reader_room) -> ResponseWriter.messages

The profile writes of a real turn (an intro answer captured, mode counters) are not made: a
preview changes nothing. What the provider then reads of these messages is its own business
(LocalLlamaProvider.fit_prompt for the bundled model). For `eko bench context
--provider-budget` (content recall scored in the prompt the model receives) and tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from eko.chat.engine.capabilities import AgentCatalog
from eko.chat.engine.context_loader import ContextLoader
from eko.chat.engine.decision import OrchestratorResult
from eko.chat.engine.executor import PlanExecutor
from eko.chat.engine.guardrails import apply_guardrails, detect_signals
from eko.chat.engine.plan import Plan, build_plan
from eko.chat.engine.registry import NodeContext, NodeRegistry, NodeResult
from eko.chat.engine.writer import ResponseWriter
from eko.chat.pipeline import Turn
from eko.config import Settings
from eko.llm.types import ChatMessage

# The reason recorded in the decision's rules ("fallback:preview"): no model was asked.
PREVIEW_REASON = "preview"


@dataclass(frozen=True, slots=True)
class WriterPrompt:
    """The writer's messages for one message, and what produced them."""

    messages: tuple[ChatMessage, ...]
    decision: OrchestratorResult
    # The results of the nodes run before the writer, by node id (the memory node's value is
    # its DualContext).
    results: Mapping[str, NodeResult]


class PromptPreview:
    def __init__(
        self,
        *,
        loader: ContextLoader,
        registry: NodeRegistry,
        writer: ResponseWriter,
        catalog: AgentCatalog,
        settings: Settings,
    ) -> None:
        self._loader = loader
        # The engine's registry: nodes registered later (memory, by eko.wiring) are run too.
        self._registry = registry
        self._writer = writer
        self._catalog = catalog
        self._settings = settings

    async def render(
        self, turn: Turn, *, decision: OrchestratorResult | None = None
    ) -> WriterPrompt:
        """The writer's messages for `turn` (its message stored or not: only its seq, content,
        time and sender are read) under `decision` (default: the deterministic one)."""
        ctx = await self._loader.load(turn)
        if decision is None:
            decision = apply_guardrails(
                None,
                ctx=ctx,
                signals=detect_signals(turn.user_message.content, ctx),
                catalog=self._catalog,
                user_message=turn.user_message.content,
                min_confidence=self._settings.orchestrator_min_confidence,
                max_scopes=self._settings.docs_max_scopes,
                fallback_reason=PREVIEW_REASON,
            )
        plan = build_plan(decision, self._registry)
        before_writer = Plan(plan.nodes[:-1])
        context = NodeContext(turn=turn, ctx=ctx, decision=decision)
        # The writer depends on every other node: running them first, then building its
        # messages from their results, is what the executor does for the whole plan.
        results = (
            await PlanExecutor(self._registry).run(before_writer, context)
            if before_writer.nodes
            else {}
        )
        writer_context = NodeContext(
            turn=turn, ctx=ctx, decision=decision, inputs=plan.nodes[-1].inputs
        )
        messages = self._writer.messages(writer_context, results)
        return WriterPrompt(tuple(messages), decision, results)
