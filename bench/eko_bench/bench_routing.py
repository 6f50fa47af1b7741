"""Who should route a message, the rules or the local model: `eko bench routing`.

Each probe is a chat message (with the turns before it, when it needs them) and the intents
that would be a sensible route. Routed three ways on the same probes, in the same run:
- **rules** (eko/chat/engine/rule_router.py): the message's words, no model call — what the
  orchestrator does for a small local model (EKO_ORCHESTRATOR_ROUTER=auto);
- **model**: the configured first provider under the orchestrator's compact contract, its
  real prompt (`eko bench llm`'s routing probes, rendered the same way); `--no-model` skips it;
- trivial baselines: always `general_question` (the deterministic fallback) and a random
  intent (averaged over 200 draws).

Splits: **dev** — `eko bench llm`'s 16 probes and `data/routing_probes_dev.jsonl`, both read
while the rules' words were written; **test** — `--data` (default
`data/routing_probes_fresh.jsonl`: 48 probes written by another session that never saw the
rules, nothing tuned on them).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from eko.chat.engine.decision import INTENTS
from eko.chat.engine.rule_router import intent_by_rules
from eko.config import Settings
from eko.llm.providers.factory import build_providers
from eko.llm.types import Provider
from eko_bench.data_errors import BenchDataError, json_lines
from eko_bench.llm_quality_json import PROBES, JsonProbe, route_probe

DATA_DIR = Path(__file__).parent / "data"
DEV_FILE = DATA_DIR / "routing_probes_dev.jsonl"
TEST_FILE = DATA_DIR / "routing_probes_fresh.jsonl"
RANDOM_DRAWS = 200
# The intents a router may propose (smalltalk_intro and discovery are modes the backend sets).
ROUTABLE = tuple(i for i in INTENTS if i not in ("smalltalk_intro", "discovery"))


@dataclass
class Row:
    router: str
    split: str
    right: float
    total: int
    seconds: list[float] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)


def load_probes(path: Path) -> list[JsonProbe]:
    probes = []
    for number, row in json_lines(path):
        try:
            intents = tuple(str(i) for i in row["intents"])
            history = tuple((str(s), str(t)) for s, t in row.get("history", ()))
            probe = JsonProbe(str(row["message"]), intents, history)
        except (KeyError, TypeError, ValueError) as exc:
            raise BenchDataError(f"{path}:{number}: not a routing probe ({exc})") from exc
        unknown = [i for i in intents if i not in INTENTS]
        if not intents or unknown:
            raise BenchDataError(f"{path}:{number}: intents must be among {', '.join(INTENTS)}")
        probes.append(probe)
    if not probes:
        raise BenchDataError(f"{path}: no probe")
    return probes


async def run(
    *,
    settings: Settings,
    console: Console,
    data: Path | None = None,
    model: bool = True,
    provider: Provider | None = None,
) -> list[Row]:
    """`provider`: a stand-in for the configured first provider (tests)."""
    splits = {
        "dev": [*PROBES, *load_probes(DEV_FILE)],
        "test": load_probes(data or TEST_FILE),
    }
    console.print(
        f"dev: {len(splits['dev'])} probes (read while the rules were written); test: "
        f"{len(splits['test'])} from {data or TEST_FILE}"
    )
    rows: list[Row] = []
    for split, probes in splits.items():
        rows.append(_score("always general_question", split, probes, lambda p: "general_question"))
        rows.append(_random(split, probes))
        rows.append(_score("rules", split, probes, lambda p: intent_by_rules(p.message)))
    if model:
        chosen = provider or build_providers(settings)[0]
        try:
            load = getattr(chosen, "load", None)
            if load is not None:
                await load()
            for split, probes in splits.items():
                rows.append(await _model(chosen, settings, split, probes))
        finally:
            if provider is None:
                await chosen.aclose()
    console.print(_table(rows))
    for row in rows:
        if row.misses and row.router in ("rules", "model (compact contract)"):
            console.print(
                f"[dim]{row.router}, {row.split}, missed — {'; '.join(row.misses)}[/dim]",
                soft_wrap=True,
            )
    return rows


def _score(router: str, split: str, probes: Sequence[JsonProbe], route: object) -> Row:
    row = Row(router, split, 0, len(probes))
    for probe in probes:
        intent = route(probe)  # type: ignore[operator]
        if intent in probe.intents:
            row.right += 1
        else:
            row.misses.append(f"{probe.message[:40]!r} → {intent}")
    return row


def _random(split: str, probes: Sequence[JsonProbe]) -> Row:
    rng = random.Random(0)
    hits = [
        sum(rng.choice(ROUTABLE) in probe.intents for probe in probes) for _ in range(RANDOM_DRAWS)
    ]
    return Row("random intent", split, statistics.fmean(hits), len(probes))


async def _model(
    provider: Provider, settings: Settings, split: str, probes: Sequence[JsonProbe]
) -> Row:
    row = Row("model (compact contract)", split, 0, len(probes))
    for probe in probes:
        routed = await route_probe(
            provider,
            probe,
            contract="compact",
            assistant_name=settings.assistant_name,
            max_tokens=settings.orchestrator_max_tokens,
        )
        row.seconds.append(routed.seconds)
        if routed.verdict.intent_ok:
            row.right += 1
        else:
            row.misses.append(f"{probe.message[:40]!r} → {routed.answer[:60]!r}")
    return row


def _table(rows: Sequence[Row]) -> Table:
    table = Table(title="eko bench routing — a sensible intent for each probe")
    for column in ("router", "split", "sensible route", "per message s (p50)"):
        table.add_column(column)
    for row in rows:
        share = row.right / row.total
        right = f"{row.right:.1f}" if isinstance(row.right, float) else str(row.right)
        table.add_row(
            row.router,
            row.split,
            f"{right}/{row.total} ({share:.0%})",
            f"{statistics.median(row.seconds):.2f}" if row.seconds else "0 (no call)",
        )
    table.caption = (
        "dev: read while the rules' words were written; test: never tuned on. A probe counts "
        "when the proposed intent is one of its sensible routes (before the guardrails)."
    )
    return table
