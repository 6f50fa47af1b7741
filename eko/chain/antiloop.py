"""Anti-loop v2 (seed): a repeated call stops its stage; every stage and the chain have budgets.

The old guard only counted failures, so a model calling `list_dir` on the same folder 15 times
(each call a success) ran to the 15-turn cap. Here a call is hashed (tool name + canonical
JSON of its arguments, or + its raw text when the arguments could not be read); the same hash
twice within one stage stops that stage at once.
Each stage counts its own turns against its budget, and the whole chain against a global cap.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

DEFAULT_GLOBAL_CAP = 8


def call_hash(name: str, args: Any, *, raw: str | None = None) -> str:
    """md5 of the name and the arguments' canonical JSON (sorted keys, no spaces); with `raw`
    (a call whose arguments could not be read), of the name and that text, spaces collapsed."""
    if raw is not None:
        canonical = "raw:" + " ".join(raw.split())
    else:
        canonical = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.md5(f"{name}{canonical}".encode(), usedforsecurity=False).hexdigest()


@dataclass
class GlobalBudget:
    """Turns left for the whole chain."""

    cap: int = DEFAULT_GLOBAL_CAP
    used: int = 0

    @property
    def left(self) -> int:
        return max(0, self.cap - self.used)


@dataclass
class StageGuard:
    """One stage's turn budget and the hashes of the calls it made."""

    budget: int
    chain: GlobalBudget
    turns: int = 0
    seen: set[str] = field(default_factory=set)
    stop_reason: str | None = None

    def can_take_turn(self) -> bool:
        if self.stop_reason is not None:
            return False
        if self.turns >= self.budget:
            self.stop_reason = "stage_budget"
        elif self.chain.left <= 0:
            self.stop_reason = "global_cap"
        return self.stop_reason is None

    def has_turn_left(self) -> bool:
        """Another turn would be allowed after the current one (no side effect)."""
        return self.turns < self.budget and self.chain.left > 0

    def take_turn(self) -> None:
        self.turns += 1
        self.chain.used += 1

    def refund(self) -> None:
        """Give back the turn just taken: the model never answered it (an offline stage)."""
        self.turns -= 1
        self.chain.used -= 1

    def allow_call(self, name: str, args: Any, *, raw: str | None = None) -> bool:
        """False (and the stage stops) when this exact call was already made in this stage;
        `raw`: the text of a call whose arguments could not be read (repeated slips count)."""
        digest = call_hash(name, args, raw=raw)
        if digest in self.seen:
            self.stop_reason = "repeated_call"
            return False
        self.seen.add(digest)
        return True
