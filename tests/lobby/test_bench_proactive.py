"""`eko bench proactive` end to end on a short run (the scripted model for both columns)."""

from __future__ import annotations

import io

from rich.console import Console

from eko.config import Settings
from eko.llm.providers import FunctionModel
from eko_bench.bench_proactive import run
from eko_bench.proactive_stack import KeywordModel


async def test_one_scripted_day_stays_within_the_budget_and_the_limits() -> None:
    out = io.StringIO()
    result = await run(
        settings=Settings(_env_file=None),
        console=Console(file=out, width=200),
        days=1,
        model="both",
        limit=6,
        providers=[FunctionModel(KeywordModel(), name="stand-in")],
    )
    assert result.within_limits
    day = result.days[0]
    assert day.interventions >= 1 and day.rate_limited >= 99  # the burst of 100 triggers
    assert 0 < day.total_calls <= 200
    assert len(result.situations) == 2
    for scores, outcomes in result.situations.values():
        assert len(outcomes) == 6 and scores.true_pos >= 1
    assert "calls/day" in out.getvalue() and "precision" in out.getvalue()
