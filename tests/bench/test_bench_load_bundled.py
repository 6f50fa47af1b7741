"""`eko bench load --scenario e`'s client and table through a real server (both backends), with
a slow scripted llama.cpp in place of the bundled model: K users at once, each told their place
when they waited, real answers counted apart from apologies and refusals."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from eko_bench.llm_quality import QAItem
from eko_bench.load.bundled import BundledResult, LinePost, bundled_table, one_round
from tests.api.live_server import running_eko
from tests.conftest import run_isolated
from tests.llm.slow_llama import SlowLlama, slow_local


def test_a_round_of_concurrent_users_through_a_real_server(
    database_url: str, tmp_path: Path
) -> None:
    local = slow_local(tmp_path, SlowLlama(delay=0.5, answer="La capitale est Rome."))
    asked = [
        QAItem("rome", "fr", "Quelle est la capitale de l'Italie ?", ("Rome",)),
        QAItem("paris", "fr", "Quelle est la capitale de la France ?", ("Paris",)),
        QAItem("madrid", "fr", "Quelle est la capitale de l'Espagne ?", ("Madrid",)),
    ]
    with running_eko(database_url, [local], local_max_queue=1) as eko:
        result = run_isolated(
            one_round(
                eko.url,
                database_url,
                backend="test",
                users=3,
                questions=1,
                timeout_s=60,
                items=asked,
            )
        )

    assert len(result.posts) == 3
    # One served, one waiting (told its place), the third refused before storing: the line
    # holds one person at most here.
    assert (result.real, result.apologies, result.refused, result.no_answer) == (2, 0, 1, 0)
    waited = [post for post in result.posts if post.status == 201 and post.places]
    assert result.told_place == len(waited) >= 1 and result.max_place == 1
    assert result.percentile(0.5) is not None
    # Each user asked its own question; the reply's text came back and was scored by content:
    # "Rome" is right for the question about Italy only.
    assert sorted(p.question.id for p in result.posts if p.question) == ["madrid", "paris", "rome"]
    answered = {p.question.id: p.right for p in result.posts if p.answer and p.question}
    assert len(answered) == 2 and all(right == (qid == "rome") for qid, right in answered.items())
    assert result.right == int("rome" in answered)


def test_the_table_counts_what_each_post_became() -> None:
    seven = QAItem("days", "en", "How many days in a week?", ("7", "seven"))
    oslo = QAItem("oslo", "en", "Capital of Norway?", ("Oslo",))
    posts = [
        LinePost(201, 2.0, "model", question=seven, answer="A week has 7 days."),
        LinePost(201, 4.0, "model", places=[1, 0], question=oslo, answer="It is Bergen."),
        LinePost(201, 9.0, "fallback", places=[2, 1, 0], question=seven, answer="Désolé…"),
        LinePost(503, 0.1, question=oslo),
        LinePost(None, 60.0, error="ReadTimeout", question=seven),
    ]
    result = BundledResult("sqlite", 4, 1, posts)
    assert (result.replies, result.real, result.apologies) == (3, 2, 1)
    assert (result.refused, result.no_answer, result.told_place, result.max_place) == (1, 1, 2, 2)
    # Right by content: only the first reply; the constant answer ("7", the most frequent
    # expected word of the three replied questions) would get the two questions on days.
    assert (result.right, result.baseline_right) == (1, 2)
    out = io.StringIO()
    Console(file=out, width=220).print(bundled_table([result]))
    row = next(line for line in out.getvalue().splitlines() if "sqlite" in line)
    cells = [cell.strip() for cell in row.split("│")[1:-1]]
    assert cells[1:10] == ["4", "5", "3", "2", "1", "2", "1", "1", "1"]
    assert cells[12:] == ["2", "2"]
