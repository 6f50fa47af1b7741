"""`eko bench context`, `recall`, `guard` and `extract`: the memory and memory-guard benchmarks."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from eko.cli.common import fail
from eko_bench import LOCOMO_FILE, QQP_FILE
from eko_bench import cli_support as support
from eko_bench.cli_support import BACKENDS, LocomoData, QqpData
from eko_bench.context.readers import ReaderSpecError, parse_reader


def context(
    data: LocomoData = None,
    split: Annotated[
        str,
        typer.Option(
            help="Conversations: all, dev (tuned on) or test (never tuned on); questions: "
            "dev-q (tuned on) or test-q (held out by hash, never tuned on)."
        ),
    ] = "all",
    limit: Annotated[
        int | None, typer.Option(min=1, help="Questions to score (default: all).")
    ] = None,
    summarizer: Annotated[
        str,
        typer.Option(
            help="extractive (deterministic stand-in) or model (the configured model, "
            "answers cached under <home>/bench-cache/)."
        ),
    ] = "extractive",
    expander: Annotated[
        str,
        typer.Option(
            help="none (multi-hop by rule alone) or model (the configured model writes a list "
            "question's phrases, as the server does; answers cached under <home>/bench-cache/)."
        ),
    ] = "none",
    budget: Annotated[
        list[int] | None,
        typer.Option(min=500, help="Context budget in chars (repeatable): one row per budget."),
    ] = None,
    backend: Annotated[
        str, typer.Option(help="sqlite or postgres (a fresh embedded PostgreSQL + pgvector).")
    ] = "sqlite",
    report: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="Write one JSON line per scored question: which method found it, sizes.",
        ),
    ] = None,
    provider_budget: Annotated[
        list[str] | None,
        typer.Option(
            help="Score the writer's real prompt as this reader's budget cuts it (repeatable): "
            "local (the bundled model's EKO_LOCAL_MAX_PROMPT_TOKENS, its own tokenizer) or N "
            "(a remote provider's budget in tokens).",
        ),
    ] = None,
) -> None:
    """dual context on LoCoMo: strict content recall vs random and BM25 baselines, sizes"""
    readers: list[str | int] = []
    for spec in provider_budget or []:
        try:
            readers.append(parse_reader(spec))
        except ReaderSpecError as exc:
            fail(f"bad --provider-budget: {exc}", fix="use local or a number of tokens (≥ 256)")
    if backend not in BACKENDS:
        fail(f"unknown backend {backend!r}", fix="use sqlite or postgres")
    if split not in ("all", "dev", "test", "dev-q", "test-q"):
        fail(f"unknown split {split!r}", fix="use all, dev, test, dev-q or test-q")
    if summarizer not in ("extractive", "model"):
        fail(f"unknown summarizer {summarizer!r}", fix="use extractive or model")
    if expander not in ("none", "model"):
        fail(f"unknown expander {expander!r}", fix="use none or model")
    if report is not None and not report.parent.is_dir():
        # Checked before the minutes of measuring, not after.
        fail(f"no directory for the report: {report.parent}", fix="create it or pick another path")
    support.run_suite(
        "eko_bench.context",
        data=support.data_file(data, LOCOMO_FILE, "context"),
        split=split,
        limit=limit,
        summarizer=summarizer,
        expander=expander,
        budgets=budget or [],
        backend=backend,
        report=report,
        provider_budgets=readers,
    )


def recall(
    data: LocomoData = None,
    turns: Annotated[
        list[int] | None, typer.Option(min=10, help="Room sizes (repeatable; default 1k, 10k).")
    ] = None,
    questions: Annotated[int, typer.Option(min=1, help="LoCoMo questions timed.")] = 150,
    backend: Annotated[
        list[str] | None, typer.Option(help="sqlite and/or postgres (repeatable; default both).")
    ] = None,
    expander: Annotated[
        str,
        typer.Option(
            help="model (the configured model writes list questions' phrases before the "
            "timing, as the server asks for them; cached under <home>/bench-cache/) or none "
            "(the rule's sub-queries alone)."
        ),
    ] = "model",
) -> None:
    """retrieval overhead per message (hybrid recall over turns) at 1k/10k turns, both backends"""
    if set(backend or []) - set(BACKENDS):
        fail(f"unknown backend in {backend}", fix="use sqlite and/or postgres")
    if expander not in ("none", "model"):
        fail(f"unknown expander {expander!r}", fix="use model or none")
    path = support.data_file(data, LOCOMO_FILE, "recall")
    support.run_suite(
        "eko_bench.bench_recall",
        data=path,
        questions=questions,
        sizes=turns,
        backends=backend,
        expander=expander,
    )


def guard(
    data: QqpData = None,
    limit: Annotated[
        int | None, typer.Option(help="Pairs of the file to use (default: all).")
    ] = None,
    split: Annotated[
        str, typer.Option(help="Figures of dev, test (held out, never tuned on) or all.")
    ] = "all",
    judge: Annotated[
        bool, typer.Option("--judge", help="Send grey-band test candidates to the chat model.")
    ] = False,
    judge_sample: Annotated[
        int, typer.Option(help="Grey-band candidates the judge is asked about.")
    ] = 80,
    sizes: Annotated[
        list[int] | None, typer.Option("--size", help="Latency: entries (repeatable).")
    ] = None,
    backend: Annotated[
        list[str] | None,
        typer.Option(
            help="Quality and latency: sqlite, postgres or both (repeatable; default both)."
        ),
    ] = None,
    lookup: Annotated[
        bool,
        typer.Option("--lookup", "--latency-only", help="Only the lookup latency (no data)."),
    ] = False,
    quality_only: Annotated[
        bool, typer.Option("--quality-only", help="Skip the lookup latency part.")
    ] = False,
    api: Annotated[
        bool,
        typer.Option(
            "--api",
            help="Only a cache hit's latency through the API (a real eko serve; p50/p95).",
        ),
    ] = False,
    api_hits: Annotated[
        int, typer.Option(help="--api: hits of each kind (exact, semantic) posted.")
    ] = 100,
    api_entries: Annotated[
        int,
        typer.Option(
            help="--api: stored questions learned before the server starts (more entries, "
            "more semantic hits found among their pairs)."
        ),
    ] = 150,
    wrong_out: Annotated[
        Path | None,
        typer.Option(
            "--wrong-out",
            help="JSONL of the shipped modes' served pairs labelled not-duplicate or answered "
            "by another question (default: eko-bench-guard-wrong.jsonl in the temp dir).",
            dir_okay=False,
        ),
    ] = None,
    families: Annotated[
        list[Path] | None,
        typer.Option(
            "--families",
            help="Only the trap/paraphrase families table, on this file ({family, lang, "
            "label, text_a, text_b} per line; repeatable).",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """memory guard: wrong serves by label and by question, recall, baselines, judge; lookups"""
    if backend and "both" in backend:
        backend = list(BACKENDS)
    unknown = sorted(set(backend or []) - set(BACKENDS))
    if unknown:
        fail(f"unknown backend {', '.join(unknown)}", fix="use sqlite, postgres or both")
    if split not in ("all", "dev", "test"):
        fail(f"unknown split {split!r}", fix="use all, dev or test")
    if judge_sample < 1:
        fail("--judge-sample must be at least 1")
    if api_hits < 1:
        fail("--api-hits must be at least 1")
    if api_entries < 1:
        fail("--api-entries must be at least 1")
    if api and lookup:
        fail("--api and --lookup are two separate runs", fix="pass one of them")
    options: dict[str, Any] = {
        "limit": limit,
        "split": split,
        "judge": judge,
        "judge_sample": judge_sample,
        "data": None if lookup or families else support.data_file(data, QQP_FILE, "guard"),
        "lookup": not quality_only,
    }
    if sizes:
        options["sizes"] = sizes
    if backend:
        options["backends"] = list(dict.fromkeys(backend))
    if wrong_out is not None:
        options["wrong_out"] = wrong_out
    if api:
        options.update(api=True, api_hits=api_hits, api_entries=api_entries)
    if families:
        options.update(families=list(families), data=None, lookup=False)
    support.run_suite("eko_bench.guard", **options)


def extract(
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Labelled exchanges, JSON lines {id, lang, user_name, previous, user, reply, "
            "expected, acceptable} (default: the packaged held-out set).",
            dir_okay=False,
            exists=True,
        ),
    ] = None,
    split: Annotated[
        str, typer.Option(help="Exchanges to run: test (default, not tuned on), dev or all.")
    ] = "test",
    limit: Annotated[int | None, typer.Option(min=1, help="Exchanges per split.")] = None,
) -> None:
    """memory extraction with the configured model: precision and recall of what it stores"""
    if split not in ("test", "dev", "all"):
        fail(f"unknown split {split!r}", fix="use --split test, dev or all")
    support.run_suite("eko_bench.bench_extract", data=data, split=split, limit=limit)
