"""The node registry: the single source of truth for what a plan may contain.

Every node type the engine can run is registered here once, with its plan id (the seed's
convention: A context, B quota, C web search, S docs chunks, D response writer), an async
runner, a timeout and the description the orchestrator's prompt shows. The plan builder only
uses registered specs, and the executor refuses any node whose type is not registered.

Other features add nodes without editing the engine (e.g. the memory feature's dual context):

    registry.register(NodeSpec(
        id="M", type="tool.memory_context", description="…", run=memory_node, timeout_s=10,
    ))

A non-final node runs when its `include(decision)` says so; the final node (the writer)
depends on every other node of the plan and gets their results.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from eko.chat.engine.context_loader import ChatContext
    from eko.chat.engine.decision import OrchestratorResult
    from eko.chat.pipeline import Turn

NODE_ID = re.compile(r"^[A-Z][A-Z0-9_]{0,15}$")
NODE_TYPE = re.compile(r"^(tool|agent)\.[a-z][a-z0-9_]{0,63}$")


class RegistryError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class WriterSection:
    """Text a node hands to the response writer's prompt."""

    title: str
    text: str
    # Lower first in the prompt: docs (10) before web (20) before the user's context (30).
    priority: int = 50
    # True when it carries the user's private data (facts, profile, their history).
    personal: bool = False
    # What kind of private data, for the message metadata ("facts", "history"…).
    personal_sources: tuple[str, ...] = ()


@dataclass(slots=True)
class NodeOutput:
    """What a node returns. `data` goes to metadata (JSON-safe, small); `value` stays in memory."""

    data: dict[str, Any] = field(default_factory=dict)
    section: WriterSection | None = None
    value: Any = None
    # Set when the node chose not to do its work (e.g. web search off): outcome "skipped".
    skipped_reason: str | None = None
    # Set when the node failed but handled it (e.g. its model call failed): outcome "error".
    error: str | None = None
    # Set by a node that covers the messages before this seq (memory, sized to the reader's
    # room): the writer sends the recent window from there only.
    recent_from_seq: int | None = None


@dataclass(slots=True)
class NodeResult:
    node_id: str
    type: str
    # ok | skipped | error | timeout | refused
    outcome: str
    duration_ms: float
    output: NodeOutput | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.outcome == "ok" and self.output is not None

    def to_meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "type": self.type,
            "outcome": self.outcome,
            "duration_ms": round(self.duration_ms, 2),
        }
        if self.error:
            meta["error"] = self.error
        if self.output is not None:
            if self.output.skipped_reason:
                meta["reason"] = self.output.skipped_reason
            if self.output.data:
                meta["data"] = self.output.data
        return meta


@dataclass(frozen=True, slots=True)
class NodeContext:
    """What every node of one turn may read."""

    turn: Turn
    ctx: ChatContext
    decision: OrchestratorResult
    # The plan node's own inputs (built by its spec from the decision).
    inputs: Mapping[str, Any] = field(default_factory=dict)


NodeRunner = Callable[[NodeContext, Mapping[str, NodeResult]], Awaitable[NodeOutput]]


def _always(_decision: OrchestratorResult) -> bool:
    return True


def _no_inputs(_decision: OrchestratorResult) -> dict[str, Any]:
    return {}


@dataclass(frozen=True, slots=True)
class NodeSpec:
    id: str
    type: str
    description: str
    run: NodeRunner
    timeout_s: float
    include: Callable[[OrchestratorResult], bool] = _always
    inputs: Callable[[OrchestratorResult], dict[str, Any]] = _no_inputs
    depends_on: tuple[str, ...] = ()
    # The node that writes the answer: exactly one per plan, after every other node.
    final: bool = False


class NodeRegistry:
    def __init__(self, specs: tuple[NodeSpec, ...] | list[NodeSpec] = ()) -> None:
        self._by_type: dict[str, NodeSpec] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: NodeSpec) -> None:
        if not NODE_ID.match(spec.id):
            raise RegistryError(f"node id {spec.id!r} must look like 'A' or 'MEM' (A-Z, 0-9, _)")
        if not NODE_TYPE.match(spec.type):
            raise RegistryError(f"node type {spec.type!r} must look like 'tool.x' or 'agent.x'")
        if spec.type in self._by_type:
            raise RegistryError(f"node type {spec.type!r} is already registered")
        if any(other.id == spec.id for other in self._by_type.values()):
            raise RegistryError(f"node id {spec.id!r} is already used")
        if spec.final and self.final() is not None:
            raise RegistryError("only one final (writer) node may be registered")
        if spec.timeout_s <= 0:
            raise RegistryError("a node timeout must be positive")
        self._by_type[spec.type] = spec

    def replace(self, spec: NodeSpec) -> NodeSpec:
        """Swap the runner of a registered node (same id and type); returns the old spec.

        For a feature that provides a better implementation of an existing node, and for tests
        that inject a fake provider; the set of node types does not change.
        """
        old = self._by_type.get(spec.type)
        if old is None or old.id != spec.id or old.final != spec.final:
            raise RegistryError(f"no registered node {spec.id} {spec.type!r} to replace")
        self._by_type[spec.type] = spec
        return old

    def get(self, node_type: str) -> NodeSpec | None:
        return self._by_type.get(node_type)

    def __contains__(self, node_type: object) -> bool:
        return node_type in self._by_type

    def __iter__(self) -> Iterator[NodeSpec]:
        return iter(self._by_type.values())

    def types(self) -> frozenset[str]:
        return frozenset(self._by_type)

    def final(self) -> NodeSpec | None:
        return next((spec for spec in self._by_type.values() if spec.final), None)

    def describe(self) -> str:
        """One line per node type, for the orchestrator's prompt."""
        return "\n".join(f"- {spec.id}: {spec.type} — {spec.description}" for spec in self)
