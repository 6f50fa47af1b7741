"""The executor: independent nodes truly concurrent, per-node timeouts, failures contained."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, cast

import pytest
from structlog.testing import capture_logs

from eko.chat.engine.executor import PlanExecutor
from eko.chat.engine.plan import Plan, PlanError, PlanNode
from eko.chat.engine.registry import (
    NodeContext,
    NodeOutput,
    NodeRegistry,
    NodeResult,
    NodeSpec,
)

Runner = Any


def _context() -> NodeContext:
    return NodeContext(turn=cast(Any, None), ctx=cast(Any, None), decision=cast(Any, None))


def _plan(*ids: str, final: str = "D") -> Plan:
    nodes = [PlanNode(i, f"tool.{i.lower()}") for i in ids]
    return Plan((*nodes, PlanNode(final, "agent.writer", tuple(ids))))


def _registry(runners: dict[str, Runner], timeout_s: float = 2.0) -> NodeRegistry:
    specs = [
        NodeSpec(
            i,
            "agent.writer" if i == "D" else f"tool.{i.lower()}",
            i,
            run,
            timeout_s,
            final=i == "D",
        )
        for i, run in runners.items()
    ]
    return NodeRegistry(specs)


async def test_independent_nodes_run_at_the_same_time() -> None:
    # A and B each wait for the other at a barrier: run one after the other, they would
    # both time out; run concurrently, both pass it.
    barrier = asyncio.Barrier(2)
    seen: dict[str, Mapping[str, NodeResult]] = {}

    async def meet(_c: NodeContext, _i: Mapping[str, NodeResult]) -> NodeOutput:
        await barrier.wait()
        return NodeOutput(data={"met": True})

    async def writer(_c: NodeContext, inputs: Mapping[str, NodeResult]) -> NodeOutput:
        seen["inputs"] = inputs
        return NodeOutput(value="answer")

    executor = PlanExecutor(_registry({"A": meet, "B": meet, "D": writer}))
    results = await executor.run(_plan("A", "B"), _context())
    assert [results[i].outcome for i in ("A", "B", "D")] == ["ok", "ok", "ok"]
    assert set(seen["inputs"]) == {"A", "B"}
    assert all(r.outcome == "ok" for r in seen["inputs"].values())


async def test_a_failing_or_slow_node_leaves_the_rest_running() -> None:
    finished: list[str] = []

    async def boom(_c: NodeContext, _i: Mapping[str, NodeResult]) -> NodeOutput:
        raise RuntimeError("database exploded")

    async def slow(_c: NodeContext, _i: Mapping[str, NodeResult]) -> NodeOutput:
        await asyncio.sleep(30)
        return NodeOutput()

    async def fine(_c: NodeContext, _i: Mapping[str, NodeResult]) -> NodeOutput:
        finished.append("C")
        return NodeOutput(data={"ok": 1})

    async def writer(_c: NodeContext, inputs: Mapping[str, NodeResult]) -> NodeOutput:
        finished.append("D")
        return NodeOutput(value={i: r.outcome for i, r in inputs.items()})

    registry = NodeRegistry(
        [
            NodeSpec("A", "tool.a", "a", boom, 2),
            NodeSpec("B", "tool.b", "b", slow, 0.05),
            NodeSpec("C", "tool.c", "c", fine, 2),
            NodeSpec("D", "agent.writer", "d", writer, 2, final=True),
        ]
    )
    with capture_logs() as logs:
        results = await PlanExecutor(registry).run(_plan("A", "B", "C"), _context())
    assert results["A"].outcome == "error" and "database exploded" in (results["A"].error or "")
    assert results["B"].outcome == "timeout"
    assert results["C"].outcome == "ok"
    assert results["D"].outcome == "ok"
    assert results["D"].output is not None
    assert results["D"].output.value == {"A": "error", "B": "timeout", "C": "ok"}
    assert finished == ["C", "D"]  # the writer ran last, after every dependency settled
    events = {e["event"]: e for e in logs if e["event"].startswith("chat.node.")}
    assert events["chat.node.tool.a"]["outcome"] == "error"
    assert events["chat.node.tool.b"]["outcome"] == "timeout"
    assert events["chat.node.tool.c"]["outcome"] == "ok"
    assert all("duration_ms" in e for e in events.values())


async def test_skipped_and_handled_failures_have_their_outcome() -> None:
    async def skip(_c: NodeContext, _i: Mapping[str, NodeResult]) -> NodeOutput:
        return NodeOutput(skipped_reason="web search is off")

    async def handled(_c: NodeContext, _i: Mapping[str, NodeResult]) -> NodeOutput:
        return NodeOutput(error="llm_error: down")

    results = await PlanExecutor(_registry({"C": skip, "D": handled})).run(_plan("C"), _context())
    assert results["C"].outcome == "skipped"
    assert results["C"].to_meta()["reason"] == "web search is off"
    assert results["D"].outcome == "error" and results["D"].error == "llm_error: down"


async def test_a_node_type_outside_the_registry_is_refused() -> None:
    async def ok(_c: NodeContext, _i: Mapping[str, NodeResult]) -> NodeOutput:
        return NodeOutput()

    executor = PlanExecutor(_registry({"A": ok, "D": ok}))
    rogue = Plan(
        (
            PlanNode("A", "tool.a"),
            PlanNode("X", "tool.shell_exec"),
            PlanNode("D", "agent.writer", ("A", "X")),
        )
    )
    with pytest.raises(PlanError, match="not in the registry"):
        await executor.run(rogue, _context())
