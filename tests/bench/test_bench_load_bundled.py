"""`eko bench load --scenario e`'s client and table through a real server (both backends), with
a slow scripted llama.cpp in place of the bundled model: K users at once, each told their place
when they waited, real answers counted apart from apologies and refusals."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from eko_bench.load.bundled import BundledResult, LinePost, bundled_table, one_round
from tests.api.live_server import running_eko
from tests.conftest import run_isolated
from tests.llm.slow_llama import SlowLlama, slow_local


def test_a_round_of_concurrent_users_through_a_real_server(
    database_url: str, tmp_path: Path
) -> None:
    local = slow_local(tmp_path, SlowLlama(delay=0.5))
    with running_eko(database_url, [local], local_max_queue=1) as eko:
        result = run_isolated(
            one_round(eko.url, database_url, backend="test", users=3, questions=1, timeout_s=60)
        )

    assert len(result.posts) == 3
    # One served, one waiting (told its place), the third refused before storing: the line
    # holds one person at most here.
    assert (result.real, result.apologies, result.refused, result.no_answer) == (2, 0, 1, 0)
    waited = [post for post in result.posts if post.status == 201 and post.places]
    assert result.told_place == len(waited) >= 1 and result.max_place == 1
    assert result.percentile(0.5) is not None


def test_the_table_counts_what_each_post_became() -> None:
    posts = [
        LinePost(201, 2.0, "model"),
        LinePost(201, 4.0, "model", places=[1, 0]),
        LinePost(201, 9.0, "fallback", places=[2, 1, 0]),
        LinePost(503, 0.1),
        LinePost(None, 60.0, error="ReadTimeout"),
    ]
    result = BundledResult("sqlite", 4, 1, posts)
    assert (result.replies, result.real, result.apologies) == (3, 2, 1)
    assert (result.refused, result.no_answer, result.told_place, result.max_place) == (1, 1, 2, 2)
    out = io.StringIO()
    Console(file=out, width=200).print(bundled_table([result]))
    row = next(line for line in out.getvalue().splitlines() if "sqlite" in line)
    cells = [cell.strip() for cell in row.split("│")[1:-1]]
    assert cells[1:8] == ["4", "5", "3", "2", "1", "1", "1"]
    assert cells[10:] == ["2", "2"]
