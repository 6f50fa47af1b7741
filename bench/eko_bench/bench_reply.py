"""The whole reply as a person waits for it, with the local model: `eko bench reply`.

Each question of a set (default: the packaged everyday set) is posted, one after another, in a
fresh direct room of a pro user, through the real API app (ASGI, in-process) on a fresh SQLite
database: orchestrator call, plan, writer call, storing — the whole reply. Background work
stays queued the whole time: memory extraction runs after every reply, as a job of the
in-process runner at background priority, so each message after the first arrives while the
previous one's extraction is running or waiting. The scheduler lets a person go first; what a
person can still wait for is one background call already in flight.

Reported per configuration: the first reply (right after start-up and the warm-up), then median
/ p95 / max over the following ones, the two calls' shares, prompt tokens, how many answers
were right (the set's expected words, as `eko bench llm` scores them; with a trivial baseline)
and a long message (6,000 characters) with what the prompt budget cut. With `--compare-cache`,
the same run again without llama.cpp's prompt cache: the cache's gain; with
`--compare-contract`, again with the orchestrator's full (seed) contract instead of the
configured one: the compact contract's gain; with `--compare-router`, again with the route
proposed by the model's call instead of the configured router (rules for the local model).
Every run ends with the **bare model** on the same questions (issue 34): the same first
provider asked directly, with `eko bench llm`'s one-line prompt and no Eko around it, scored
the same way — the pipeline must not score below it.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table
from sqlalchemy import select

from eko.api.app import create_app
from eko.config import Settings
from eko.embed import Embedder
from eko.llm.providers.factory import build_providers
from eko.llm.types import ChatMessage, Provider, ProviderRequest
from eko.store import users as user_repo
from eko.store.migrate import upgrade
from eko.store.models import LLMCall
from eko.wiring import Services, build_services
from eko_bench.llm_quality import (
    ANSWER_MAX_TOKENS,
    DEFAULT_QA_FILE,
    QA_SYSTEM_PROMPT,
    QAItem,
    is_right,
    load_questions,
    most_frequent_expected_word,
)

LONG_MESSAGE_CHARS = 6_000
_FOREGROUND = ("orchestrator", "writer")
_FILLER = (
    "Je te colle ici mes notes de la réunion d'hier, un peu en vrac : le planning du "
    "trimestre, les retours des clients sur la nouvelle version, les idées de l'équipe pour "
    "le salon de printemps et deux ou trois points de budget à revoir. "
)


@dataclass
class Reply:
    seconds: float
    right: bool
    orchestrator_s: float = 0.0
    writer_s: float = 0.0
    orchestrator_tokens: int = 0
    writer_tokens: int = 0
    input_cut: dict[str, Any] | None = None
    answer: str = ""


@dataclass
class ConfigResult:
    label: str
    replies: list[Reply] = field(default_factory=list)
    long_reply: Reply | None = None
    background_calls: int = 0
    load_s: float = 0.0
    warm_up_s: float = 0.0
    bare: bool = False  # the model asked directly, no Eko around it


async def run(
    *,
    settings: Settings,
    console: Console,
    data: Path | None = None,
    limit: int = 12,
    compare_cache: bool = False,
    compare_contract: bool = False,
    compare_router: bool = False,
    long_message: bool = True,
    providers: Sequence[Provider] | None = None,
    embedder: Embedder | None = None,
) -> list[ConfigResult]:
    """`providers` / `embedder`: stand-ins for the configured ones (tests)."""
    items = load_questions(data or DEFAULT_QA_FILE)[:limit]
    if settings.llm_providers[0].kind != "local":
        console.print("[yellow]The first provider is not the local model: measuring it.[/yellow]")
    console.print(
        f"{len(items)} questions from {data or DEFAULT_QA_FILE}, one after another, each in a "
        f"fresh direct room; memory extraction queued after every reply (background); "
        f"prompt budget {settings.local_max_prompt_tokens} tokens; {settings.local_threads} "
        f"threads; load average {_load_average()}"
    )
    cache_on: dict[str, Any] = {"local_prompt_cache_mb": settings.local_prompt_cache_mb or 512}
    contract = settings.orchestrator_contract
    router = settings.orchestrator_router
    configs = [(f"prompt cache on, contract {contract}, router {router}", cache_on)]
    if compare_cache:
        configs.append((f"prompt cache off, contract {contract}", {"local_prompt_cache_mb": 0}))
    if compare_contract:
        full = {**cache_on, "orchestrator_contract": "full"}
        configs.append(("prompt cache on, contract full", full))
    if compare_router:
        by_model = {**cache_on, "orchestrator_router": "model"}
        configs.append((f"prompt cache on, contract {contract}, router model", by_model))
    results = []
    for label, overrides in configs:
        console.print(f"[bold]{label}[/bold] …")
        results.append(
            await _measure(
                label,
                settings,
                overrides,
                items,
                long_message=long_message,
                providers=providers,
                embedder=embedder,
            )
        )
    console.print("[bold]bare model[/bold] …")
    bare = await _bare_model(settings, items, providers=providers)
    results.append(bare)
    console.print(_table(results, items))
    right = {result.label: sum(r.right for r in result.replies) for result in results}
    worse = [label for label, n in right.items() if n < right[bare.label]]
    verdict = (
        f"below the bare model ({right[bare.label]}/{len(items)}): " + ", ".join(worse)
        if worse
        else f"no configuration below the bare model ({right[bare.label]}/{len(items)})"
    )
    console.print(verdict)
    for result in results:
        misses = "; ".join(
            f"{item.id}: {reply.answer[:60]!r}"
            for item, reply in zip(items, result.replies, strict=True)
            if not reply.right
        )
        if misses:
            console.print(f"[dim]{result.label} missed — {misses}[/dim]", soft_wrap=True)
    return results


async def _measure(
    label: str,
    base: Settings,
    overrides: dict[str, Any],
    items: Sequence[QAItem],
    *,
    long_message: bool,
    providers: Sequence[Provider] | None,
    embedder: Embedder | None,
) -> ConfigResult:
    result = ConfigResult(label)
    with tempfile.TemporaryDirectory(prefix="eko-bench-reply-") as home:
        settings = base.model_copy(
            update={
                "database_url": f"sqlite+aiosqlite:///{home}/eko.db",
                "memory_extract_enabled": True,
                "guard_enabled": False,  # every question must reach the model
                **overrides,
            }
        )
        services = build_services(settings, providers=providers, embedder=embedder)
        try:
            await upgrade(services.database)
            began = time.perf_counter()
            for provider in services.providers:
                load = getattr(provider, "load", None)
                if load is not None:
                    await load()
            result.load_s = time.perf_counter() - began
            began = time.perf_counter()
            # As `eko serve` does at start-up (EKO_LOCAL_WARM_UP).
            if settings.local_warm_up:
                await services.warm_up()
            result.warm_up_s = time.perf_counter() - began
            await services.jobs.start()
            await _ask_all(services, settings, items, result, long_message=long_message)
            await services.jobs.drain()
            async with services.database.session() as session:
                purposes = (await session.execute(select(LLMCall.purpose))).scalars().all()
            result.background_calls = sum(p not in _FOREGROUND for p in purposes)
        finally:
            await services.aclose()
    return result


async def _bare_model(
    settings: Settings, items: Sequence[QAItem], *, providers: Sequence[Provider] | None
) -> ConfigResult:
    """The first provider on the same questions, asked as `eko bench llm` asks it: the
    provider alone (EKO_LLM_PROVIDERS' first entry, or the stand-in), no services around it."""
    result = ConfigResult("bare model (eko bench llm's one-line prompt, no Eko)", bare=True)
    provider = providers[0] if providers else build_providers(settings)[0]
    try:
        load = getattr(provider, "load", None)
        if load is not None:
            began = time.perf_counter()
            await load()
            result.load_s = time.perf_counter() - began
        for item in items:
            request = ProviderRequest(
                messages=(
                    ChatMessage("system", QA_SYSTEM_PROMPT),
                    ChatMessage("user", item.question),
                ),
                max_tokens=ANSWER_MAX_TOKENS,
                temperature=0.0,
            )
            began = time.perf_counter()
            response = await provider.generate(request)
            seconds = time.perf_counter() - began
            answer = response.text
            result.replies.append(
                Reply(seconds, is_right(answer, item), writer_s=seconds, answer=answer)
            )
    finally:
        if not providers:  # a stand-in belongs to the caller
            await provider.aclose()
    return result


async def _ask_all(
    services: Services,
    settings: Settings,
    items: Sequence[QAItem],
    result: ConfigResult,
    *,
    long_message: bool,
) -> None:
    async with services.database.session() as session:
        _, key = await user_repo.create_user(session, display_name="Camille", is_pro=True)
    headers = {"Authorization": f"Bearer {key}"}
    app = create_app(settings, services=services, migrate=False)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://eko_bench", timeout=900
    ) as client:
        for item in items:
            reply = await _ask(client, headers, item.question)
            reply.right = is_right(reply.answer, item)
            result.replies.append(reply)
        if long_message:
            result.long_reply = await _ask(client, headers, _long_message(items[0].question))


async def _ask(client: httpx.AsyncClient, headers: dict[str, str], text: str) -> Reply:
    room = (await client.post("/v1/rooms", json={"kind": "direct"}, headers=headers)).json()
    began = time.perf_counter()
    response = await client.post(
        f"/v1/rooms/{room['id']}/messages", json={"content": text}, headers=headers
    )
    seconds = time.perf_counter() - began
    response.raise_for_status()
    assistant = response.json()["assistant_message"]
    calls = (await client.get(f"/v1/rooms/{room['id']}/llm-calls", headers=headers)).json()
    reply = Reply(seconds=seconds, right=False, answer=assistant["content"])
    for call in calls:
        if call["purpose"] == "orchestrator":
            reply.orchestrator_s += call["duration_ms"] / 1000
            reply.orchestrator_tokens = call["input_tokens"]
        elif call["purpose"] == "writer":
            reply.writer_s += call["duration_ms"] / 1000
            reply.writer_tokens = call["input_tokens"]
    reply.input_cut = assistant["metadata"].get("input_cut")
    return reply


def _long_message(question: str) -> str:
    body = (_FILLER * (LONG_MESSAGE_CHARS // len(_FILLER) + 1))[: LONG_MESSAGE_CHARS - 200]
    return f"{body}\n\nBref. Une question sans rapport : {question}"


def _table(results: Sequence[ConfigResult], items: Sequence[QAItem]) -> Table:
    word = most_frequent_expected_word(items)
    baseline = sum(is_right(word, item) for item in items)
    table = Table(title="eko bench reply — the whole reply (orchestrator + writer), local model")
    for column in (
        "configuration",
        "right",
        "first reply s",
        "median s",
        "p95 s",
        "max s",
        "orchestrator / writer median s",
        "prompt tokens (orch. / writer)",
        "6,000-char message s",
        "cut to (tokens)",
        "background calls",
    ):
        table.add_column(column)
    for result in results:
        later = [r.seconds for r in result.replies[1:]] or [r.seconds for r in result.replies]
        replies = result.replies
        long = result.long_reply
        cut = long.input_cut if long is not None else None
        table.add_row(
            result.label,
            f"{sum(r.right for r in replies)}/{len(replies)} (baseline {baseline})",
            f"{replies[0].seconds:.1f}" if replies else "-",
            f"{statistics.median(later):.1f}",
            f"{_p95(later):.1f}",
            f"{max(later):.1f}",
            f"{statistics.median(r.orchestrator_s for r in replies):.1f} / "
            f"{statistics.median(r.writer_s for r in replies):.1f}"
            if not result.bare
            else f"- / {statistics.median(r.writer_s for r in replies):.1f}",
            f"{statistics.median(r.orchestrator_tokens for r in replies):.0f} / "
            f"{statistics.median(r.writer_tokens for r in replies):.0f}"
            if not result.bare
            else "-",
            f"{long.seconds:.1f}" if long is not None else "-",
            (f"{cut['kept_tokens']} of {cut['original_tokens']}" if cut else "not cut")
            if long is not None
            else "-",
            str(result.background_calls) if not result.bare else "-",
        )
    table.caption = (
        f"first reply: right after start-up (model load {results[0].load_s:.1f} s and warm-up "
        f"{results[0].warm_up_s:.1f} s not counted, as `eko serve` does both before the first "
        "person asks). "
        "median/p95/max: the following replies. right: the set's expected words; baseline: "
        f"always answering {word!r}. cut to: the writer's prompt after the budget. bare "
        "model: the same provider asked directly (no orchestrator, persona or memory)."
    )
    return table


def _p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _load_average() -> str:
    try:
        with open("/proc/loadavg") as handle:
            return handle.read().split()[0]
    except OSError:
        return "?"
