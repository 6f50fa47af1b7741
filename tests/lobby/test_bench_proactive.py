"""`eko bench proactive` end to end on a short run (the scripted model for both columns)."""

from __future__ import annotations

import io

from rich.console import Console

from eko.config import Settings
from eko.embed.hashing import HashEmbedder
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
        split="dev",
        limit=6,
        providers=[FunctionModel(KeywordModel(), name="stand-in")],
        embedder=HashEmbedder(),
    )
    assert result.within_limits
    day = result.days[0]
    assert day.interventions >= 1 and day.rate_limited >= 99  # the burst of 100 triggers
    assert 0 < day.total_calls <= 200
    rows = result.situations
    assert list(rows)[:4] == [
        "never speak",
        "always speak",
        "keyword model decides (scripted)",
        "pre-score rules, scripted writer",
    ]
    assert len(rows) == 5  # + the stand-in for the configured model
    assert all(len(outcomes) == 6 for _scores, outcomes in rows.values())
    labels = [o.situation.label for o in rows["never speak"][1]]
    assert rows["never speak"][0].recall == 0.0
    assert rows["always speak"][0].precision == labels.count("message") / 6
    # The rules decide the situations they were written on, and the writer is asked once each.
    rules, outcomes = rows["pre-score rules, scripted writer"]
    assert (rules.false_pos, rules.false_neg) == (0, 0)
    spoken = [o for o in outcomes if o.predicted == "message"]
    # "(scripted message)" poses nothing: the curiosity or fact itself is posted, and it is
    # what the situation called for.
    assert spoken and all(o.written_by == "memory" and o.said_right for o in spoken)
    assert not any(o.said_right for o in rows["always speak"][1])
    assert "calls/day" in out.getvalue() and "precision" in out.getvalue()
