"""The plan: a DAG of whitelisted nodes, built by the backend from the orchestrator's flags.

The seed's "plan minimal figé": the model never writes the plan; it only raises flags
(need_web, scope_need…). The backend builds a stable plan from the registry:

    A tool.db_load_context ─┐
    B tool.quota_check     ─┤
    S tool.docs_chunks     ─┼─> D agent.response_writer
    C tool.web_search      ─┘      (S only with scope_need, C only with need_web)

and validates it (ids unique, types registered, depends_on known and acyclic) before running.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from typing import Any

from eko.chat.engine.decision import OrchestratorResult
from eko.chat.engine.registry import NodeRegistry


class PlanError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class PlanNode:
    id: str
    type: str
    depends_on: tuple[str, ...] = ()
    inputs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Plan:
    nodes: tuple[PlanNode, ...]

    def node(self, node_id: str) -> PlanNode:
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)

    @property
    def ids(self) -> list[str]:
        return [node.id for node in self.nodes]

    def to_meta(self) -> list[dict[str, Any]]:
        return [
            {
                "id": node.id,
                "type": node.type,
                "depends_on": list(node.depends_on),
                "inputs": dict(node.inputs),
            }
            for node in self.nodes
        ]


def build_plan(decision: OrchestratorResult, registry: NodeRegistry) -> Plan:
    final = registry.final()
    if final is None:
        raise PlanError("no final (writer) node is registered")
    nodes = [
        PlanNode(spec.id, spec.type, spec.depends_on, spec.inputs(decision))
        for spec in registry
        if not spec.final and spec.include(decision)
    ]
    nodes.append(
        PlanNode(
            final.id,
            final.type,
            tuple(node.id for node in nodes),
            final.inputs(decision),
        )
    )
    plan = Plan(tuple(nodes))
    validate_plan(plan, registry.types())
    return plan


def validate_plan(plan: Plan, allowed_types: Container[str]) -> None:
    """Raise PlanError unless ids are unique, types allowed, depends_on known and acyclic."""
    if not plan.nodes:
        raise PlanError("empty plan")
    ids = [node.id for node in plan.nodes]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise PlanError(f"duplicate node ids: {', '.join(duplicates)}")
    for node in plan.nodes:
        if node.type not in allowed_types:
            raise PlanError(f"node {node.id}: type {node.type!r} is not in the registry")
        unknown = [dep for dep in node.depends_on if dep not in ids]
        if unknown:
            raise PlanError(f"node {node.id} depends on unknown nodes: {', '.join(unknown)}")
        if node.id in node.depends_on:
            raise PlanError(f"node {node.id} depends on itself")
    topological_order(plan)


def topological_order(plan: Plan) -> list[PlanNode]:
    """Nodes with every dependency before its dependents; PlanError on a cycle."""
    by_id = {node.id: node for node in plan.nodes}
    done: set[str] = set()
    visiting: set[str] = set()
    order: list[PlanNode] = []

    def visit(node_id: str, path: tuple[str, ...]) -> None:
        if node_id in done:
            return
        if node_id in visiting:
            cycle = " -> ".join((*path[path.index(node_id) :], node_id))
            raise PlanError(f"cycle in plan: {cycle}")
        visiting.add(node_id)
        for dep in by_id[node_id].depends_on:
            if dep in by_id:
                visit(dep, (*path, node_id))
        visiting.discard(node_id)
        done.add(node_id)
        order.append(by_id[node_id])

    for node in plan.nodes:
        visit(node.id, ())
    return order
