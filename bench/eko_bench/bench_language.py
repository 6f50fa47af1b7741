"""Does the reply follow the language of the message it answers? `eko bench language`.

Each dialog of a set (default: the packaged one, bench/eko_bench/reply_language.py) is posted
message by message in a fresh direct room of a new user, through the real API app (ASGI,
in-process) on a fresh SQLite database with the configured model: orchestrator, plan, writer,
storing, the whole reply. Every reply is scored by content: is it in the language of the
message it answers (the server's own detector), and does it repeat one of the user's
sentences word for word.

Reported per configuration, on a split of the dialogs (`--split test` by default: the prompt
wording was chosen on `dev`): replies in the right language, the same for replies to a
message that switched language (the hard case), replies with no clear language, echoes and
fallbacks; with a trivial baseline in the same table: every reply in the dialog's first
language, what a model anchored on the history does. With `--compare-hint`, the same run
again without the writer's `reply_language` line (EKO_WRITER_REPLY_LANGUAGE=false).
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
from eko_bench.in_process import served_in_process
from eko_bench.reply_language import (
    DEFAULT_DIALOGS_FILE,
    Dialog,
    Split,
    echoes,
    first_language_baseline,
    load_dialogs,
    reply_language,
    select_split,
)


@dataclass(frozen=True, slots=True)
class ScoredReply:
    dialog: str
    turn: int
    asked: str
    expected: str
    switched: bool  # the message's language differs from the previous message's
    answer: str
    language: str
    echo: bool
    fallback: bool
    seconds: float

    @property
    def right(self) -> bool:
        return self.language == self.expected


@dataclass
class LanguageResult:
    label: str
    replies: list[ScoredReply] = field(default_factory=list)


async def run(
    *,
    settings: Settings,
    console: Console,
    data: Path | None = None,
    split: Split = "test",
    limit: int | None = None,
    compare_hint: bool = False,
    providers: Sequence[Provider] | None = None,
    embedder: Embedder | None = None,
) -> list[LanguageResult]:
    """`providers` / `embedder`: stand-ins for the configured ones (tests)."""
    path = data or DEFAULT_DIALOGS_FILE
    dialogs = select_split(load_dialogs(path), split)[:limit]
    turns = sum(len(d.turns) for d in dialogs)
    console.print(
        f"{len(dialogs)} dialogs ({turns} messages) from {path}, split {split}"
        f"{' (the prompt wording was chosen on dev)' if split == 'test' else ''}; "
        f"first provider: {settings.llm_providers[0].kind}"
    )
    configs = [("reply_language stated (default)", True)]
    if compare_hint:
        configs.append(("reply_language not stated", False))
    results = []
    for label, hint in configs:
        console.print(f"[bold]{label}[/bold] …")
        overrides = {"writer_reply_language": hint}
        results.append(
            await _measure(label, settings, overrides, dialogs, providers, embedder, console)
        )
    console.print(_table(results, dialogs))
    for result in results:
        wrong = [r for r in result.replies if not r.right or r.echo]
        if wrong:
            lines = "; ".join(
                f"{r.dialog}#{r.turn} [{r.expected}→{r.language}{', echo' if r.echo else ''}] "
                f"{r.answer[:70]!r}"
                for r in wrong
            )
            console.print(f"[dim]{escape(result.label)} — {escape(lines)}[/dim]", soft_wrap=True)
    return results


async def _measure(
    label: str,
    base: Settings,
    overrides: Mapping[str, object],
    dialogs: Sequence[Dialog],
    providers: Sequence[Provider] | None,
    embedder: Embedder | None,
    console: Console,
) -> LanguageResult:
    result = LanguageResult(label)
    async with served_in_process(
        base, overrides, providers=providers, embedder=embedder, prefix="eko-bench-language-"
    ) as (client, services):
        for number, dialog in enumerate(dialogs, start=1):
            async with services.database.session() as session:
                _, key = await user_repo.create_user(session, display_name=f"Person {number}")
            result.replies += await _post_dialog(client, key, dialog)
            console.print(f"  {number}/{len(dialogs)} dialogs", end="\r")
    return result


async def _post_dialog(client: httpx.AsyncClient, key: str, dialog: Dialog) -> list[ScoredReply]:
    headers = {"Authorization": f"Bearer {key}"}
    room = (await client.post("/v1/rooms", json={"kind": "direct"}, headers=headers)).json()
    said: list[str] = []
    replies = []
    for index, turn in enumerate(dialog.turns):
        said.append(turn.text)
        began = time.perf_counter()
        response = await client.post(
            f"/v1/rooms/{room['id']}/messages", json={"content": turn.text}, headers=headers
        )
        seconds = time.perf_counter() - began
        response.raise_for_status()
        assistant = response.json()["assistant_message"]
        answer = assistant["content"]
        meta = assistant.get("metadata") or {}
        replies.append(
            ScoredReply(
                dialog=dialog.id,
                turn=index + 1,
                asked=turn.text,
                expected=turn.lang,
                switched=index > 0 and turn.lang != dialog.turns[index - 1].lang,
                answer=answer,
                language=reply_language(answer),
                echo=echoes(answer, said),
                fallback=bool(meta.get("fallback_used")) or assistant.get("type") == "fallback",
                seconds=seconds,
            )
        )
    return replies


def _share(flags: Sequence[bool]) -> str:
    return f"{sum(flags)}/{len(flags)} ({100 * sum(flags) / len(flags):.0f}%)" if flags else "-"


def _table(results: Sequence[LanguageResult], dialogs: Sequence[Dialog]) -> Table:
    table = Table(title="eko bench language — the reply's language and echoes, whole replies")
    for column in (
        "configuration",
        "right language",
        "after a switch",
        "first messages",
        "no clear language",
        "echoes a user sentence",
        "fallbacks",
        "median s",
    ):
        table.add_column(column)
    baseline = [right for d in dialogs for right in first_language_baseline(d)]
    switched = [
        right
        for d in dialogs
        for i, right in enumerate(first_language_baseline(d))
        if i > 0 and d.turns[i].lang != d.turns[i - 1].lang
    ]
    firsts = [True for _ in dialogs]
    table.add_row(
        "baseline: always the first message's language (no model)",
        _share(baseline),
        _share(switched),
        _share(firsts),
        "-",
        "-",
        "-",
        "-",
    )
    for result in results:
        replies = result.replies
        table.add_row(
            result.label,
            _share([r.right for r in replies]),
            _share([r.right for r in replies if r.switched]),
            _share([r.right for r in replies if r.turn == 1]),
            _share([r.language == "und" for r in replies]),
            _share([r.echo for r in replies]),
            _share([r.fallback for r in replies]),
            f"{statistics.median(r.seconds for r in replies):.1f}" if replies else "-",
        )
    table.caption = (
        "language read by the server's detector (eko/guard/language.py; no clear signal counts "
        "as wrong); echo = a sentence of 4+ words the user wrote, repeated word for word; "
        "after a switch = replies to a message in another language than the one before."
    )
    return table
