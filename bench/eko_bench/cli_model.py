"""`eko bench llm`, `reply`, `routing`, `language` and `grounded`: the chat model's benchmarks
(answer quality, the whole reply, routing, reply language, invented personal facts)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from eko.cli.common import fail
from eko_bench import cli_support as support


def llm(
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Question set, JSON lines (default: the packaged everyday set).",
            dir_okay=False,
            exists=True,
        ),
    ] = None,
    model: Annotated[
        list[str] | None, typer.Option(help="A bundled model (repeatable; default: all).")
    ] = None,
) -> None:
    """local chat models: answer quality (FR/EN), orchestrator JSON, tokens/s, answer time"""
    support.run_suite("eko_bench.bench_llm", data=data, models=model)


def reply(
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Question set, JSON lines (default: the packaged everyday set).",
            dir_okay=False,
            exists=True,
        ),
    ] = None,
    limit: Annotated[int, typer.Option(min=2, help="Questions to post.")] = 12,
    compare_cache: Annotated[
        bool, typer.Option("--compare-cache", help="Run again without the prompt cache.")
    ] = False,
    compare_contract: Annotated[
        bool,
        typer.Option(
            "--compare-contract", help="Run again with the orchestrator's full (seed) contract."
        ),
    ] = False,
    compare_router: Annotated[
        bool,
        typer.Option("--compare-router", help="Run again with the route proposed by a model call."),
    ] = False,
    long_message: Annotated[
        bool, typer.Option(help="Also post one 6,000-character message.")
    ] = True,
) -> None:
    """the whole reply with the local model while background work is queued: median/p95 s"""
    support.run_suite(
        "eko_bench.bench_reply",
        data=data,
        limit=limit,
        compare_cache=compare_cache,
        compare_contract=compare_contract,
        compare_router=compare_router,
        long_message=long_message,
    )


def routing(
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Test probes, JSON lines of {message, intents, history?} (default: the "
            "packaged fresh probes).",
            dir_okay=False,
            exists=True,
        ),
    ] = None,
    model: Annotated[
        bool, typer.Option(help="Also route with the configured model (compact contract).")
    ] = True,
) -> None:
    """routing by rules vs by the local model: a sensible intent, per message time"""
    support.run_suite("eko_bench.bench_routing", data=data, model=model)


def language(
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Dialogs, JSON lines {id, turns: [{text, lang}]} (default: the packaged set).",
            dir_okay=False,
            exists=True,
        ),
    ] = None,
    split: Annotated[
        str, typer.Option(help="Dialogs to post: test (default, not tuned on), dev or all.")
    ] = "test",
    limit: Annotated[int | None, typer.Option(min=1, help="Dialogs to post.")] = None,
    compare_hint: Annotated[
        bool,
        typer.Option("--compare-hint", help="Run again without the writer's reply_language line."),
    ] = False,
) -> None:
    """replies in the language of the message they answer, and echoes (configured model)"""
    if split not in ("test", "dev", "all"):
        fail(f"unknown split {split!r}", fix="use --split test, dev or all")
    support.run_suite(
        "eko_bench.bench_language", data=data, split=split, limit=limit, compare_hint=compare_hint
    )


def grounded(
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Questions, JSON lines {id, lang, split, kind: unstated|stated, history, "
            "question, expected} (default: the packaged set).",
            dir_okay=False,
            exists=True,
        ),
    ] = None,
    split: Annotated[
        str, typer.Option(help="Questions to ask: test (default, not tuned on), dev or all.")
    ] = "test",
    limit: Annotated[
        int | None, typer.Option(min=1, help="Questions per language and kind (unstated, stated).")
    ] = None,
) -> None:
    """questions about the user's life: invented answers vs "I don't know" (configured model)"""
    if split not in ("test", "dev", "all"):
        fail(f"unknown split {split!r}", fix="use --split test, dev or all")
    support.run_suite("eko_bench.bench_grounded", data=data, split=split, limit=limit)
