"""Does the reply invent facts about the user it was never told? `eko bench grounded`.

Each question of a set (default: the packaged one, bench/eko_bench/grounded_data.py) is asked
in a fresh direct room of a new user whose profile is known (first name, address form, city,
activity: no introduction under way), through the real API app (ASGI, in-process) on a fresh
SQLite database with the configured model: orchestrator, plan, writer, storing, the whole
reply. For a "stated" question, its history is imported into the room first (no model call),
so the fact is in the recent window the writer reads.

Reported per configuration and language, on a split (`--split test` by default: the rules
and prompts were written with dev in view): replies to unstated questions that invent, that
say they do not know (or ask), stated questions answered right and wrongly refused, replies
the check after the writer corrected, fallbacks. Configurations in the same run: grounded
(the default: note + check), today's pipeline without them (EKO_WRITER_GROUNDING=false), and
the trivial baseline "always say I don't know" (no model).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from eko.config import Settings
from eko.embed import Embedder
from eko.llm.types import Provider
from eko.store import users as user_repo
from eko_bench.grounded_data import (
    DEFAULT_QUESTIONS_FILE,
    GroundedQuestion,
    Split,
    answers,
    does_not_know,
    load_questions,
    select,
)
from eko_bench.in_process import served_in_process

# A known profile: the writer is past the introduction (its required facts are known).
PROFILE = {
    "first_name": "Alex",
    "use_tu_form": True,
    "main_city": "Lyon",
    "main_activity": "architecte",
}


@dataclass(frozen=True, slots=True)
class ScoredReply:
    question: GroundedQuestion
    answer: str
    dont_know: bool
    right: bool  # stated: the expected fact is in the answer
    corrected: bool  # the check after the writer replaced the model's answer
    fallback: bool
    seconds: float

    @property
    def invented(self) -> bool:
        return self.question.kind == "unstated" and not self.dont_know


@dataclass
class GroundedResult:
    label: str
    replies: list[ScoredReply] = field(default_factory=list)


async def run(
    *,
    settings: Settings,
    console: Console,
    data: Path | None = None,
    split: Split = "test",
    limit: int | None = None,
    compare_today: bool = True,
    providers: Sequence[Provider] | None = None,
    embedder: Embedder | None = None,
) -> list[GroundedResult]:
    """`providers` / `embedder`: stand-ins for the configured ones (tests); `compare_today`
    False: the grounded configuration alone."""
    path = data or DEFAULT_QUESTIONS_FILE
    questions = select(load_questions(path), split, limit)
    console.print(
        f"{len(questions)} questions from {path}, split {split}"
        f"{f', at most {limit} per language and kind' if limit else ''}; "
        f"first provider: {settings.llm_providers[0].kind}"
    )
    configs = [("grounded: note + check (default)", True), ("today: no note, no check", False)]
    if not compare_today:
        configs = configs[:1]
    results = []
    for label, grounding in configs:
        console.print(f"[bold]{label}[/bold] …")
        overrides = {"writer_grounding": grounding}
        results.append(
            await _measure(label, settings, overrides, questions, providers, embedder, console)
        )
    console.print(_table(results, questions))
    for result in results:
        wrong = [
            r for r in result.replies if r.invented or (r.question.kind == "stated" and not r.right)
        ]
        if wrong:
            lines = "; ".join(f"{r.question.id} {r.answer[:70]!r}" for r in wrong)
            console.print(f"[dim]{escape(result.label)} — {escape(lines)}[/dim]", soft_wrap=True)
    return results


async def _measure(
    label: str,
    base: Settings,
    overrides: Mapping[str, object],
    questions: Sequence[GroundedQuestion],
    providers: Sequence[Provider] | None,
    embedder: Embedder | None,
    console: Console,
) -> GroundedResult:
    result = GroundedResult(label)
    async with served_in_process(
        base, overrides, providers=providers, embedder=embedder, prefix="eko-bench-grounded-"
    ) as (client, services):
        for number, question in enumerate(questions, start=1):
            async with services.database.session() as session:
                user, key = await user_repo.create_user(session, display_name=f"Person {number}")
                public_id = user.public_id
            result.replies.append(await _ask(client, key, public_id, question))
            console.print(f"  {number}/{len(questions)} questions", end="\r")
    return result


async def _ask(
    client: httpx.AsyncClient, key: str, public_id: str, question: GroundedQuestion
) -> ScoredReply:
    headers = {"Authorization": f"Bearer {key}"}
    for fact, value in PROFILE.items():
        response = await client.put(
            f"/v1/users/{public_id}/facts/{fact}", json={"value": value}, headers=headers
        )
        response.raise_for_status()
    room = (await client.post("/v1/rooms", json={"kind": "direct"}, headers=headers)).json()
    if question.history:
        turns = [{"role": t.role, "content": t.content} for t in question.history]
        response = await client.post(
            f"/v1/rooms/{room['id']}/messages:import", json={"messages": turns}, headers=headers
        )
        response.raise_for_status()
    began = time.perf_counter()
    response = await client.post(
        f"/v1/rooms/{room['id']}/messages", json={"content": question.question}, headers=headers
    )
    seconds = time.perf_counter() - began
    response.raise_for_status()
    assistant = response.json()["assistant_message"]
    answer = assistant["content"]
    meta = assistant.get("metadata") or {}
    grounding = meta.get("grounding") or {}
    return ScoredReply(
        question=question,
        answer=answer,
        dont_know=does_not_know(answer),
        right=question.kind == "stated" and answers(answer, question),
        corrected=bool(grounding.get("corrected")),
        fallback=bool(meta.get("fallback_used")) or assistant.get("type") == "fallback",
        seconds=seconds,
    )


def _share(flags: Sequence[bool]) -> str:
    return f"{sum(flags)}/{len(flags)}" if flags else "-"


def _table(results: Sequence[GroundedResult], questions: Sequence[GroundedQuestion]) -> Table:
    table = Table(title="eko bench grounded — questions about the user's life, whole replies")
    for column in (
        "configuration",
        "lang",
        "unstated: invented",
        "unstated: don't know",
        "stated: right",
        "stated: don't know",
        "corrected by the check",
        "fallbacks",
        "median s",
    ):
        table.add_column(column)
    for lang in ("en", "fr"):
        asked = [q for q in questions if q.lang == lang]
        never_said = [q.kind == "unstated" for q in asked if q.kind == "unstated"]
        said = [q.kind == "stated" for q in asked if q.kind == "stated"]
        table.add_row(
            "baseline: always 'I don't know' (no model)",
            lang,
            _share([False for _ in never_said]),
            _share(never_said),
            _share([False for _ in said]),
            _share(said),
            "-",
            "-",
            "-",
        )
    for result in results:
        for lang in ("en", "fr"):
            replies = [r for r in result.replies if r.question.lang == lang]
            unstated = [r for r in replies if r.question.kind == "unstated"]
            stated = [r for r in replies if r.question.kind == "stated"]
            table.add_row(
                result.label,
                lang,
                _share([r.invented for r in unstated]),
                _share([r.dont_know for r in unstated]),
                _share([r.right for r in stated]),
                _share([r.dont_know and not r.right for r in stated]),
                _share([r.corrected for r in replies]),
                _share([r.fallback for r in replies]),
                f"{statistics.median(r.seconds for r in replies):.1f}" if replies else "-",
            )
    table.caption = (
        "invented = a reply to a question about something never said that neither says it "
        "does not know nor only asks back (word rule of bench/eko_bench/grounded_data.py, "
        "kept apart from the server's check); right = holds the stated fact."
    )
    return table
