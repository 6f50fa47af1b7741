"""Scenario (e): the bundled model under K concurrent users (`eko bench load --scenario e`).

One `eko serve` with the bundled llama.cpp model only (no fake upstream); for each K, K users,
each in their own room, start at once and post `questions` short questions one after another
(each waits for its reply), streamed (SSE) so that every `queued` event is seen. The questions
are everyday questions with their accepted answers (`everyday_qa_test.jsonl` by default, or any
file of that format): an answer by the model is not yet a right one, so each reply is also
scored by content, with the constant answer of llm_quality's baseline beside it. Per K: replies,
real answers against apologies (the canned fallback), right answers, refusals (503 before
storing: the local line was full, EKO_LOCAL_MAX_QUEUE), posts with no answer, p50/p95 of the
whole exchange, and how many posts were told their place in line (a `queued` event with a
position ≥ 1).

It runs the real model on this machine's cores: the figures mean something on a quiet machine
only, and a full run (K = 1, 2, 4, 8) takes many minutes.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from rich.table import Table

from eko_bench.llm_quality import QAItem, is_right, load_questions, most_frequent_expected_word
from eko_bench.load.client import create_direct_room
from eko_bench.load.eko_server import EkoServer
from eko_bench.load.records import create_pro_users

DEFAULT_QUESTIONS_FILE = Path(__file__).parent.parent / "data" / "everyday_qa_test.jsonl"


def default_questions() -> list[QAItem]:
    return load_questions(DEFAULT_QUESTIONS_FILE)


@dataclass
class LinePost:
    """One streamed post: its status (None: no HTTP answer), time, reply source, places."""

    status: int | None
    seconds: float
    source: str | None = None
    places: list[int] = field(default_factory=list)
    error: str | None = None
    question: QAItem | None = None
    answer: str | None = None  # the reply's text, when one came

    @property
    def right(self) -> bool:
        """The reply contains an accepted answer (llm_quality's rule)."""
        return (
            self.answer is not None
            and self.question is not None
            and is_right(self.answer, self.question)
        )

    @property
    def real(self) -> bool:
        return self.status == 201 and self.source == "model"

    @property
    def apology(self) -> bool:
        return self.status == 201 and self.source == "fallback"

    @property
    def told_place(self) -> bool:
        return any(position >= 1 for position in self.places)


@dataclass
class BundledResult:
    backend: str
    users: int
    questions: int
    posts: list[LinePost]

    def _count(self, test: Callable[[LinePost], bool]) -> int:
        return sum(1 for post in self.posts if test(post))

    @property
    def replies(self) -> int:
        return self._count(lambda p: p.status == 201 and p.source is not None)

    @property
    def real(self) -> int:
        return self._count(lambda p: p.real)

    @property
    def apologies(self) -> int:
        return self._count(lambda p: p.apology)

    @property
    def right(self) -> int:
        return self._count(lambda p: p.right)

    @property
    def baseline_right(self) -> int:
        """Replies the constant answer (the asked questions' most frequent expected word)
        would have got right: what the scorer gives for free."""
        replied = [p.question for p in self.posts if p.answer is not None and p.question]
        word = most_frequent_expected_word(replied)
        return sum(is_right(word, question) for question in replied)

    @property
    def refused(self) -> int:
        return self._count(lambda p: p.status == 503)

    @property
    def no_answer(self) -> int:
        return self._count(lambda p: p.status is None or (p.status == 201 and p.source is None))

    @property
    def told_place(self) -> int:
        return self._count(lambda p: p.told_place)

    @property
    def max_place(self) -> int:
        return max((max(p.places, default=0) for p in self.posts), default=0)

    def percentile(self, q: float) -> float | None:
        times = sorted(p.seconds for p in self.posts if p.status == 201)
        if not times:
            return None
        if len(times) == 1:
            return times[0]
        return statistics.quantiles(times, n=100, method="inclusive")[round(q * 100) - 1]


async def streamed_post(
    client: httpx.AsyncClient, room_id: str, key: str, question: QAItem
) -> LinePost:
    began = time.perf_counter()
    places: list[int] = []
    source: str | None = None
    answer: str | None = None
    content = question.question
    try:
        async with client.stream(
            "POST",
            f"/v1/rooms/{room_id}/messages?stream=true",
            json={"content": content},
            headers={"Authorization": f"Bearer {key}"},
        ) as response:
            if response.status_code != 201:
                await response.aread()
                return LinePost(
                    response.status_code, time.perf_counter() - began, question=question
                )
            event = ""
            async for line in response.aiter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    data: Any = json.loads(line[6:])
                    if event == "queued":
                        places.append(int(data["position"]))
                    elif event == "done":
                        source = data.get("source")
                        reply = data.get("message") or {}
                        answer = reply.get("content")
            seconds = time.perf_counter() - began
            return LinePost(201, seconds, source, places, question=question, answer=answer)
    except (httpx.HTTPError, OSError) as exc:
        seconds = time.perf_counter() - began
        error = type(exc).__name__
        return LinePost(None, seconds, places=places, error=error, question=question)


async def one_round(
    base_url: str,
    database_url: str,
    *,
    backend: str,
    users: int,
    questions: int,
    timeout_s: float,
    items: Sequence[QAItem] | None = None,
) -> BundledResult:
    """K users at once; user i asks the set's questions from its (i × questions)-th on, so
    every post of a round asks a different question while the set lasts."""
    asked = list(items) if items is not None else default_questions()
    keys = await create_pro_users(database_url, [f"line-{users}-{i}" for i in range(users)])
    rooms = [await create_direct_room(base_url, key, timeout_s=30) for key in keys]
    start = asyncio.Event()

    async def user(index: int, client: httpx.AsyncClient) -> list[LinePost]:
        await start.wait()
        posts = []
        for number in range(questions):
            question = asked[(index * questions + number) % len(asked)]
            posts.append(await streamed_post(client, rooms[index], keys[index], question))
        return posts

    async with httpx.AsyncClient(base_url=base_url, timeout=timeout_s) as client:
        tasks = [asyncio.create_task(user(i, client)) for i in range(users)]
        await asyncio.sleep(0)
        start.set()
        done = await asyncio.gather(*tasks)
    return BundledResult(backend, users, questions, [post for posts in done for post in posts])


async def run_bundled(
    backend: str,
    *,
    workdir: Path,
    database_url: str,
    user_counts: Sequence[int],
    questions: int,
    timeout_s: float,
    on_start: Callable[[str], None],
    items: Sequence[QAItem] | None = None,
) -> list[BundledResult]:
    """One server with the bundled model, then one round per K, in order."""
    on_start(f"{backend}: starting Eko with the bundled model…")
    results = []
    async with EkoServer(
        name="eko-bundled",
        database_url=database_url,
        providers=[{"kind": "local"}],
        workdir=workdir,
        start_timeout_s=600.0,
    ) as server:
        for users in user_counts:
            on_start(f"{backend}: {users} users × {questions} questions on the bundled model…")
            results.append(
                await one_round(
                    server.url,
                    database_url,
                    backend=backend,
                    users=users,
                    questions=questions,
                    timeout_s=timeout_s,
                    items=items,
                )
            )
    return results


COLUMNS = (
    "backend",
    "users",
    "posts",
    "replies",
    "real",
    "right",
    "baseline right",
    "apologies",
    "refused",
    "no answer",
    "p50 s",
    "p95 s",
    "told place",
    "max place",
)


def bundled_table(results: Sequence[BundledResult]) -> Table:
    first = results[0] if results else None
    title = "Bundled model, K concurrent users (e)"
    if first is not None:
        title += f": each user posts {first.questions} questions one after another"
    table = Table(title=title)
    for column in COLUMNS:
        table.add_column(column, justify="left" if column == "backend" else "right", no_wrap=True)
    for r in results:
        p50, p95 = r.percentile(0.5), r.percentile(0.95)
        table.add_row(
            r.backend,
            str(r.users),
            str(len(r.posts)),
            str(r.replies),
            str(r.real),
            str(r.right),
            str(r.baseline_right),
            str(r.apologies),
            str(r.refused),
            str(r.no_answer),
            f"{p50:.1f}" if p50 is not None else "-",
            f"{p95:.1f}" if p95 is not None else "-",
            str(r.told_place),
            str(r.max_place),
        )
    table.caption = (
        "real: answered by the model; right: the reply contains an accepted answer; baseline "
        "right: the same replies if each were the set's most frequent expected word; "
        "apologies: the canned fallback; refused: 503 before storing (the local line was "
        "full, EKO_LOCAL_MAX_QUEUE); p50/p95: the whole exchange, "
        "post to done, of the replies; told place: posts that got a `queued` event with a "
        "position ≥ 1 (they waited in line and were told where they stood). Meaningful on a "
        "quiet machine only."
    )
    return table
