"""The plan executor: runs the DAG, independent nodes truly concurrently.

Each node is an asyncio task that waits for its dependencies to finish (whatever their outcome),
then runs under its own timeout. A failing or slow node never stops the others: its dependents
run with what is available (they see its NodeResult with outcome error/timeout) — except when
the database is busy or unreachable, which stops the plan (the message stays owed). The hard
allowlist is checked twice: the plan is validated against the registry, and a node whose type
is not registered is refused at run time.

Every node logs `chat.node.<type>` with its id, outcome and duration.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

import structlog

from eko.chat.engine.plan import Plan, PlanNode, topological_order, validate_plan
from eko.chat.engine.registry import NodeContext, NodeRegistry, NodeResult
from eko.llm.deadline import time_limit
from eko.store.outage import database_busy_or_unavailable

log = structlog.get_logger("eko.chat")

# Error text kept in metadata and logs.
_MAX_ERROR_CHARS = 300


class PlanExecutor:
    def __init__(self, registry: NodeRegistry) -> None:
        self._registry = registry

    async def run(self, plan: Plan, context: NodeContext) -> dict[str, NodeResult]:
        """Run every node; returns their results by node id, in plan order."""
        validate_plan(plan, self._registry.types())
        tasks: dict[str, asyncio.Task[NodeResult]] = {}

        async def run_after_dependencies(node: PlanNode) -> NodeResult:
            dependencies = [tasks[dep] for dep in node.depends_on]
            if dependencies:
                await asyncio.wait(dependencies)
            inputs = {dep: tasks[dep].result() for dep in node.depends_on}
            return await self._run_node(node, context, inputs)

        # Every task exists before any of them runs, so a dependency is always found.
        for node in topological_order(plan):
            tasks[node.id] = asyncio.create_task(
                run_after_dependencies(node), name=f"chat.node.{node.id}"
            )
        try:
            await asyncio.gather(*tasks.values())
        except BaseException:
            for task in tasks.values():
                task.cancel()
            raise
        return {node.id: tasks[node.id].result() for node in plan.nodes}

    async def _run_node(
        self, node: PlanNode, context: NodeContext, inputs: Mapping[str, NodeResult]
    ) -> NodeResult:
        started = time.perf_counter()
        spec = self._registry.get(node.type)
        if spec is None:
            result = NodeResult(node.id, node.type, "refused", 0.0, error="type not registered")
            self._log(result)
            return result
        node_context = NodeContext(
            turn=context.turn, ctx=context.ctx, decision=context.decision, inputs=node.inputs
        )
        try:
            # A limit that stops counting while a model call waits in the local model's line
            # (eko/llm/deadline.py): the writer's cap never fires on a person still queued.
            async with time_limit(spec.timeout_s):
                output = await spec.run(node_context, inputs)
        except TimeoutError:
            result = NodeResult(
                node.id,
                node.type,
                "timeout",
                _elapsed_ms(started),
                error=f"no result within {spec.timeout_s:g}s",
            )
        except Exception as exc:
            if database_busy_or_unavailable(exc):
                # The plan stops: an answer written without the database would be a degraded
                # one, or the canned apology; the message is answered again later instead
                # (eko/chat/answering.py leaves it owed).
                raise
            log.warning("chat.executor.node_failed", node_id=node.id, type=node.type, exc_info=True)
            result = NodeResult(
                node.id,
                node.type,
                "error",
                _elapsed_ms(started),
                error=f"{type(exc).__name__}: {exc}"[:_MAX_ERROR_CHARS],
            )
        else:
            outcome = "error" if output.error else "skipped" if output.skipped_reason else "ok"
            result = NodeResult(
                node.id, node.type, outcome, _elapsed_ms(started), output, error=output.error
            )
        self._log(result)
        return result

    @staticmethod
    def _log(result: NodeResult) -> None:
        # A message runs ~5 nodes: their successes are debug lines, their failures warnings
        # (each info line costs the message about a millisecond of CPU on a small machine).
        method = log.debug if result.outcome in ("ok", "skipped") else log.warning
        method(
            f"chat.node.{result.type}",
            node_id=result.node_id,
            outcome=result.outcome,
            duration_ms=round(result.duration_ms, 2),
            reason=result.output.skipped_reason if result.output is not None else None,
            error=result.error,
        )


def _elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
