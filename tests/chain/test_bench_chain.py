"""`eko bench chain`: the table's figures for loop / wander / offline against the 15-turn loop."""

from __future__ import annotations

import io

from rich.console import Console

from eko.config import Settings
from eko_bench import bench_chain


async def test_bench_chain_figures() -> None:
    out = io.StringIO()
    rows = await bench_chain.run(
        settings=Settings(_env_file=None), console=Console(file=out, width=220)
    )
    figures = {(r.scenario.split(" ")[0], r.design.split(" ")[0]): r for r in rows}
    loop_before, loop_chain = figures["loop", "before:"], figures["loop", "chain"]
    assert (loop_before.turns, loop_before.reply) == (15, False)
    assert (loop_chain.turns, loop_chain.model_calls, loop_chain.reply) == (4, 4, True)
    wander = figures["wander", "chain"]
    assert (wander.turns, wander.reply) == (8, False)
    offline = figures["offline", "chain"]
    assert (offline.turns, offline.reply) == (2, True)
    assert "M1:offline" in offline.stops
    same = figures["same", "chain"]
    assert same.turns == 6 and same.stops.count("repeated_call") == 3
    assert "eko bench chain" in out.getvalue()
