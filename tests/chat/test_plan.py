"""The plan: stable, built from the flags and the registry, validated before it runs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pytest

from eko.chat.engine.decision import FALLBACK_PROPOSAL, OrchestratorResult, Signals
from eko.chat.engine.plan import Plan, PlanError, PlanNode, build_plan, validate_plan
from eko.chat.engine.registry import (
    NodeContext,
    NodeOutput,
    NodeRegistry,
    NodeResult,
    NodeSpec,
    RegistryError,
)


async def _noop(_context: NodeContext, _inputs: Mapping[str, NodeResult]) -> NodeOutput:
    return NodeOutput()


def _registry() -> NodeRegistry:
    return NodeRegistry(
        [
            NodeSpec("A", "tool.db_load_context", "ctx", _noop, 1),
            NodeSpec("B", "tool.quota_check", "quota", _noop, 1),
            NodeSpec(
                "S",
                "tool.docs_chunks",
                "docs",
                _noop,
                1,
                include=lambda d: d.scope_need,
                inputs=lambda d: {"scopes": list(d.scopes_selected)},
            ),
            NodeSpec(
                "C",
                "tool.web_search",
                "web",
                _noop,
                1,
                include=lambda d: d.need_web,
                inputs=lambda d: {"query": d.web_search_prompt},
            ),
            NodeSpec(
                "D",
                "agent.response_writer",
                "writer",
                _noop,
                1,
                final=True,
                inputs=lambda d: {"mode": d.mode, "intent": d.intent},
            ),
        ]
    )


def _decision(**changes: object) -> OrchestratorResult:
    base = OrchestratorResult(
        intent="general_question",
        mode="normal",
        intent_eligible=True,
        intent_block_reason=None,
        context_level="light",
        need_web=False,
        web_search_prompt="",
        scope_need=False,
        scopes_selected=(),
        gates={},
        capabilities={},
        signals=Signals(),
        proposal=FALLBACK_PROPOSAL,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_minimal_plan_is_a_b_then_d() -> None:
    plan = build_plan(_decision(), _registry())
    assert plan.ids == ["A", "B", "D"]
    assert plan.node("D").depends_on == ("A", "B")
    assert plan.node("D").inputs == {"mode": "normal", "intent": "general_question"}


def test_flags_add_docs_and_web_nodes_before_the_writer() -> None:
    plan = build_plan(
        _decision(
            need_web=True,
            web_search_prompt="météo lyon",
            scope_need=True,
            scopes_selected=("product",),
        ),
        _registry(),
    )
    assert plan.ids == ["A", "B", "S", "C", "D"]
    assert plan.node("D").depends_on == ("A", "B", "S", "C")
    assert plan.node("C").inputs == {"query": "météo lyon"}
    assert plan.node("S").inputs == {"scopes": ["product"]}


def test_a_feature_registers_its_own_node() -> None:
    registry = _registry()
    registry.register(NodeSpec("M", "tool.memory_context", "memory", _noop, 1))
    plan = build_plan(_decision(), registry)
    assert "M" in plan.ids and "M" in plan.node("D").depends_on
    assert "tool.memory_context" in registry.describe()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (NodeSpec("A", "tool.other", "dup id", _noop, 1), "already used"),
        (NodeSpec("Z", "tool.quota_check", "dup type", _noop, 1), "already registered"),
        (NodeSpec("z", "tool.x", "bad id", _noop, 1), "node id"),
        (NodeSpec("Y", "shell.rm", "bad type", _noop, 1), "node type"),
        (NodeSpec("W", "agent.other_writer", "2nd final", _noop, 1, final=True), "final"),
    ],
)
def test_registry_refuses_bad_specs(spec: NodeSpec, message: str) -> None:
    with pytest.raises(RegistryError, match=message):
        _registry().register(spec)


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        ((PlanNode("A", "tool.db_load_context"), PlanNode("A", "tool.quota_check")), "duplicate"),
        ((PlanNode("A", "tool.db_load_context", ("X",)),), "unknown nodes: X"),
        (
            (
                PlanNode("A", "tool.db_load_context", ("B",)),
                PlanNode("B", "tool.quota_check", ("A",)),
            ),
            "cycle",
        ),
        ((PlanNode("A", "tool.db_load_context", ("A",)),), "itself"),
        ((PlanNode("X", "tool.shell"),), "not in the registry"),
        ((), "empty"),
    ],
)
def test_invalid_plans_are_refused(nodes: tuple[PlanNode, ...], message: str) -> None:
    with pytest.raises(PlanError, match=message):
        validate_plan(Plan(nodes), _registry().types())
