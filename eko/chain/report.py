"""What a chain run returns: per-stage reports and the seed's response shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from eko.chain.tools.registry import ToolResult

StageStatus = Literal["ok", "offline", "timeout", "failed"]
# Why the simple path wrote the answer instead of the chain: no stage wrote a usable reply, or
# the chain itself broke.
FallbackReason = Literal["no_reply", "chain_error"]


@dataclass
class StageReport:
    node: str
    model: str
    turns: int = 0
    tools_used: list[ToolResult] = field(default_factory=list)
    duration_ms: float = 0.0
    status: StageStatus = "ok"
    # Why the stage stopped: answered, repeated_call, stage_budget, global_cap, offline, …
    stop_reason: str | None = None
    text: str = ""
    model_calls: int = 0
    error: str | None = None

    @property
    def ran(self) -> bool:
        """The stage's model answered at least once (an offline stage did not run)."""
        return self.model_calls > 0

    @property
    def useful(self) -> bool:
        return bool(self.text) or any(result.ok for result in self.tools_used)

    def to_meta(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "model": self.model,
            "turns": self.turns,
            "tools_used": [result.to_meta() for result in self.tools_used],
            "duration_ms": round(self.duration_ms, 1),
            "status": self.status,
            "stop_reason": self.stop_reason,
            "useful": self.useful,
        }


@dataclass
class ChainResult:
    reply: str | None
    stages: list[StageReport]
    # Set when the answer came from the simple path instead; the stages are still reported.
    fallback: FallbackReason | None = None

    @property
    def turns(self) -> int:
        return sum(stage.turns for stage in self.stages)

    @property
    def model_calls(self) -> int:
        return sum(stage.model_calls for stage in self.stages)

    @property
    def ran(self) -> list[StageReport]:
        return [stage for stage in self.stages if stage.ran]

    def to_meta(self) -> dict[str, Any]:
        """The seed's shape: {reply, mode, turns, chain: [...], tools_used}; stages that did not
        run (offline) are listed under `skipped`, so an offline M1 reads OL1 -> M2, and
        `fallback` says why the simple path answered instead (null when the chain did)."""
        return {
            "reply": self.reply,
            "mode": "reflexive",
            "turns": self.turns,
            "chain": [stage.to_meta() for stage in self.ran],
            "tools_used": [
                result.to_meta() for stage in self.stages for result in stage.tools_used
            ],
            "skipped": [
                {"node": stage.node, "reason": stage.stop_reason or stage.status}
                for stage in self.stages
                if not stage.ran
            ],
            "fallback": self.fallback,
        }
