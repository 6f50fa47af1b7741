"""`eko bench proactive`: the lobby's proactive side against the seed's numbers.

1. Scripted lobby days (fake clock, keyword-scripted model): model calls per day by purpose,
   interventions, passes, rate-limited, smallest gap, against the budget (~200 calls a day) and
   the rate limits (5 a day, 30 minutes apart), with 100 simultaneous triggers once a day.
2. Labelled situations: precision and recall of "message vs pass" on the opportunity path, with
   the scripted model and/or the configured model (the bundled local one by default), beside
   the trivial deciders (never speak, always speak) and the pre-score rules alone (a scripted
   writer), on a split the rules were never written on (`--split test`, the default).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from eko.config import Settings
from eko.embed.base import Embedder
from eko.embed.factory import build_embedder
from eko.llm.providers import FunctionModel
from eko.llm.types import Provider
from eko_bench.proactive_days import Day, simulate
from eko_bench.proactive_situations import (
    Outcome,
    Scores,
    Situation,
    load_situations,
    run_situations,
    score,
    split_situations,
)
from eko_bench.proactive_stack import KeywordModel

BUDGET_PER_DAY = 200
ModelChoice = Literal["scripted", "local", "both"]
Decider = Literal["auto", "rules", "model"]


@dataclass(frozen=True)
class ProactiveResult:
    days: list[Day]
    situations: dict[str, tuple[Scores, list[Outcome]]]

    @property
    def within_limits(self) -> bool:
        return all(
            d.total_calls <= BUDGET_PER_DAY
            and d.interventions <= 5
            and (d.min_gap_min is None or d.min_gap_min >= 30)
            for d in self.days
        )


async def run(
    *,
    settings: Settings,
    console: Console,
    data: Path | None = None,
    split: str = "test",
    days: int = 3,
    seed: int = 7,
    model: ModelChoice = "scripted",
    decider: Decider = "auto",
    limit: int | None = None,
    providers: Sequence[Provider] | None = None,
    embedder: Embedder | None = None,
) -> ProactiveResult:
    """`providers`, `embedder`: stand-ins for the configured model and embedder (tests);
    `decider`: EKO_LOBBY_DECIDER for the configured model's row."""
    situations = (load_situations(data) if data else split_situations(split))[:limit]
    with tempfile.TemporaryDirectory(prefix="eko-bench-proactive-") as tmp:
        directory = Path(tmp)
        simulated = await simulate(days=days, seed=seed, directory=directory) if days else []
        results: dict[str, tuple[Scores, list[Outcome]]] = {}
        if situations:
            for label, predicted in (("never speak", "pass"), ("always speak", "message")):
                fixed = _fixed(situations, predicted)
                results[label] = (score(fixed), fixed)
        chosen_embedder = embedder or build_embedder(settings)
        if situations and model in ("scripted", "both"):
            outcomes = await run_situations(
                situations, providers=[FunctionModel(KeywordModel())], directory=directory
            )
            results["keyword model decides (scripted)"] = (score(outcomes), outcomes)
            outcomes = await run_situations(
                situations,
                providers=[FunctionModel(KeywordModel())],
                directory=directory,
                embedder=chosen_embedder,
                decider="rules",
            )
            results["pre-score rules, scripted writer"] = (score(outcomes), outcomes)
        if situations and model in ("local", "both"):
            chosen = list(providers) if providers is not None else _configured(settings)
            try:
                outcomes = await run_situations(
                    situations,
                    providers=chosen,
                    directory=directory,
                    embedder=chosen_embedder,
                    decider=decider,
                )
            finally:
                if providers is None:
                    for provider in chosen:
                        await provider.aclose()
            names = ", ".join(f"{p.name}:{p.model}" for p in chosen)
            results[f"{names} (decider {decider})"] = (score(outcomes), outcomes)
    result = ProactiveResult(simulated, results)
    _print(console, result)
    return result


def _fixed(situations: Sequence[Situation], predicted: str) -> list[Outcome]:
    return [
        Outcome(situation=s, predicted=predicted, said=None, model_calls=0, seconds=0.0)
        for s in situations
    ]


def _configured(settings: Settings) -> list[Provider]:
    from eko.llm.providers import build_providers

    return build_providers(settings)


def _print(console: Console, result: ProactiveResult) -> None:
    if result.days:
        table = Table(title="Scripted lobby days (fake clock, keyword model)")
        for column in (
            "day", "msgs", "summary calls", "opportunity calls", "reflection calls",
            "calls/day", "interventions", "passes", "rate-limited", "min gap (min)", "ok",
        ):  # fmt: skip
            table.add_column(column, justify="right")
        for day in result.days:
            ok = (
                day.total_calls <= BUDGET_PER_DAY
                and day.interventions <= 5
                and (day.min_gap_min is None or day.min_gap_min >= 30)
            )
            table.add_row(
                str(day.day),
                str(day.messages),
                str(day.calls.get("SummaryOutput", 0)),
                str(day.calls.get("OpportunityDecision", 0)),
                str(day.calls.get("ReflectionDecision", 0)),
                f"{day.total_calls} / {BUDGET_PER_DAY}",
                f"{day.interventions} / 5",
                str(day.passes),
                str(day.rate_limited),
                "-" if day.min_gap_min is None else f"{day.min_gap_min:.0f}",
                "yes" if ok else "NO",
            )
        console.print(table)
    if not result.situations:
        return
    table = Table(title="Labelled lobby situations: message vs pass")
    for column in (
        "decider",
        "n",
        "precision",
        "recall",
        "accuracy",
        "TP",
        "FP",
        "FN",
        "TN",
        "said right",
        "posted as memory",
        "s/situation",
    ):
        table.add_column(column, justify="right")
    for label, (scores, outcomes) in result.situations.items():
        per = sum(o.seconds for o in outcomes) / len(outcomes) if outcomes else 0.0
        right = sum(o.said_right for o in outcomes)
        memory = sum(o.written_by == "memory" for o in outcomes)
        table.add_row(
            escape(label),
            str(len(outcomes)),
            f"{scores.precision:.2f}",
            f"{scores.recall:.2f}",
            f"{scores.accuracy:.2f}",
            str(scores.true_pos),
            str(scores.false_pos),
            str(scores.false_neg),
            str(scores.true_neg),
            f"{right} / {scores.true_pos}" if scores.true_pos else "-",
            str(memory),
            f"{per:.1f}",
        )
    console.print(table)
    for label, (_scores, outcomes) in result.situations.items():
        if label in ("never speak", "always speak"):
            continue
        wrong = [o for o in outcomes if o.predicted != o.situation.label]
        for o in wrong:
            said = f": {o.said[:80]!r}" if o.said else ""
            console.print(
                f"[dim]{escape(label)} wrong on {o.situation.id} ({o.situation.kind}): "
                f"{o.predicted}, expected {o.situation.label}{escape(said)}[/dim]"
            )
