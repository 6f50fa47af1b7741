"""Local chat models side by side: answer quality, JSON validity, speed — to choose the default.

For each candidate (every bundled model, plus EKO_LOCAL_MODEL_PATH when set), through
LocalLlamaProvider — the path a reply takes: chat template or transcript, sanitizer, grammar:

- quality: the everyday question set (bench/eko_bench/llm_quality.py; `--data PATH` overrides it),
  right answers in French, English and in all, and the time to each complete short answer;
- output tokens/s on two longer plain answers;
- JSON: the orchestrator's two real output contracts (full, compact) on real-looking messages
  (llm_quality_json.py): valid answers, sensible intents, seconds per call (prompt evaluation
  included), each as "full / compact".

Two baselines score the scorer: an always-empty answer, and a constant answer made of the
set's most frequent expected word. Wired into `eko bench llm`; also
`python -m eko_bench.bench_llm [--data PATH] [--model NAME ...]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from eko.config import Settings
from eko.llm.bundled import BUNDLED_MODELS
from eko.llm.errors import ProviderError
from eko.llm.providers.local import LocalLlamaProvider
from eko.llm.types import ChatMessage, ProviderRequest
from eko_bench.llm_quality import (
    ANSWER_MAX_TOKENS,
    DEFAULT_QA_FILE,
    QA_SYSTEM_PROMPT,
    QAItem,
    is_right,
    load_questions,
    most_frequent_expected_word,
)
from eko_bench.llm_quality_json import (
    CONTRACTS,
    PROBES,
    route_probe,
)

PLAIN_MAX_TOKENS = 64
PLAIN_PROMPTS = (
    "Explain how bread rises, step by step.",
    "Raconte-moi une histoire courte sur un chat qui voyage en train.",
)


@dataclass
class CandidateResult:
    name: str
    size_mb: float | None = None
    load_s: float | None = None
    right: dict[str, int] = field(default_factory=dict)  # per language
    asked: dict[str, int] = field(default_factory=dict)
    answer_seconds: list[float] = field(default_factory=list)
    plain_tokens: int = 0
    plain_seconds: float = 0.0
    # Per orchestrator contract (full, compact).
    json_valid: dict[str, int] = field(default_factory=dict)
    json_intent_ok: dict[str, int] = field(default_factory=dict)
    json_seconds: dict[str, list[float]] = field(default_factory=dict)
    misses: list[tuple[str, str]] = field(default_factory=list)
    error: str | None = None
    baseline: bool = False

    @property
    def right_total(self) -> int:
        return sum(self.right.values())

    @property
    def asked_total(self) -> int:
        return sum(self.asked.values())


async def run(
    *,
    settings: Settings,
    console: Console,
    data: Path | None = None,
    models: Sequence[str] | None = None,
) -> list[CandidateResult]:
    """Measure every candidate, print one table, and return the rows."""
    items = load_questions(data or DEFAULT_QA_FILE)
    names = list(models) if models else [model.name for model in reversed(BUNDLED_MODELS)]
    candidates: list[tuple[str, Path | None]] = [(name, None) for name in names]
    if settings.local_model_path is not None and not models:
        candidates.append((settings.local_model_path.stem, settings.local_model_path))
    console.print(
        f"{len(items)} questions from {data or DEFAULT_QA_FILE}; {len(PROBES)} JSON probes; "
        f"{settings.local_threads} threads on {os.cpu_count()} cores; "
        f"load average before it starts {_load_average()} (above ~0.5: other jobs share the "
        "cores, and the speed columns are slower than on a quiet machine)"
    )
    results = [*_baselines(items)]
    for name, path in candidates:
        console.print(f"[bold]{name}[/bold] …")
        results.append(await _measure(name, path, items, settings, console))
    table = _table(results, len(items))
    console.print(table)
    # The same rows as Markdown, whatever the terminal width (for docs/benchmarks.md).
    console.print(_markdown(table), soft_wrap=True, markup=False, highlight=False)
    for result in results:
        if result.misses:
            misses = "; ".join(f"{qid}: {answer[:60]!r}" for qid, answer in result.misses)
            console.print(f"[dim]{result.name} missed — {misses}[/dim]", soft_wrap=True)
    return results


def _baselines(items: Sequence[QAItem]) -> list[CandidateResult]:
    word = most_frequent_expected_word(items)
    rows = []
    for label, answer in (("baseline: empty answer", ""), (f"baseline: always {word!r}", word)):
        row = CandidateResult(name=label, baseline=True)
        for item in items:
            row.asked[item.lang] = row.asked.get(item.lang, 0) + 1
            row.right[item.lang] = row.right.get(item.lang, 0) + is_right(answer, item)
        rows.append(row)
    return rows


async def _measure(
    name: str,
    path: Path | None,
    items: Sequence[QAItem],
    settings: Settings,
    console: Console,
) -> CandidateResult:
    result = CandidateResult(name=name)
    provider = LocalLlamaProvider(
        path,
        bundled=name if path is None else settings.local_model,
        n_ctx=settings.local_n_ctx,
        n_threads=settings.local_threads,
        models_dir=settings.models_dir,
    )
    try:
        started = time.perf_counter()
        await provider.load()  # assembles a bundled model the first time
        result.load_s = time.perf_counter() - started
        if provider.model_path is not None:
            result.size_mb = provider.model_path.stat().st_size / 1e6
        # One unmeasured call: the first generation allocates compute buffers.
        await provider.generate(_request("Hi", max_tokens=4))
        await _quality(provider, items, result)
        console.print(f"  quality {result.right_total}/{result.asked_total}")
        await _plain_speed(provider, result)
        await _json(provider, settings, result)
        console.print(f"  JSON valid {result.json_valid}, intents {result.json_intent_ok}")
    except (ProviderError, KeyError, OSError) as exc:
        result.error = str(exc)[:200]
        console.print(f"  [red]unavailable:[/red] {result.error}")
    finally:
        await provider.aclose()
    return result


def _request(question: str, *, max_tokens: int = ANSWER_MAX_TOKENS) -> ProviderRequest:
    return ProviderRequest(
        messages=(ChatMessage("system", QA_SYSTEM_PROMPT), ChatMessage("user", question)),
        max_tokens=max_tokens,
        temperature=0.0,
    )


async def _quality(
    provider: LocalLlamaProvider, items: Sequence[QAItem], result: CandidateResult
) -> None:
    for item in items:
        started = time.perf_counter()
        try:
            answer = (await provider.generate(_request(item.question))).text
        except ProviderError as exc:
            answer = f"<error: {exc}>"
        result.answer_seconds.append(time.perf_counter() - started)
        result.asked[item.lang] = result.asked.get(item.lang, 0) + 1
        right = is_right(answer, item)
        result.right[item.lang] = result.right.get(item.lang, 0) + right
        if not right:
            result.misses.append((item.id, answer))


async def _plain_speed(provider: LocalLlamaProvider, result: CandidateResult) -> None:
    for prompt in PLAIN_PROMPTS:
        started = time.perf_counter()
        response = await provider.generate(_request(prompt, max_tokens=PLAIN_MAX_TOKENS))
        result.plain_seconds += time.perf_counter() - started
        result.plain_tokens += response.usage.output_tokens


async def _json(provider: LocalLlamaProvider, settings: Settings, result: CandidateResult) -> None:
    for contract in CONTRACTS:
        for probe in PROBES:
            routed = await route_probe(
                provider,
                probe,
                contract=contract,
                assistant_name=settings.assistant_name,
                max_tokens=settings.orchestrator_max_tokens,
            )
            result.json_seconds.setdefault(contract, []).append(routed.seconds)
            verdict = routed.verdict
            result.json_valid[contract] = result.json_valid.get(contract, 0) + verdict.valid
            result.json_intent_ok[contract] = (
                result.json_intent_ok.get(contract, 0) + verdict.intent_ok
            )


def _per_contract(counts: dict[str, int]) -> str:
    return " / ".join(f"{counts.get(contract, 0)}/{len(PROBES)}" for contract in CONTRACTS)


def _table(results: Sequence[CandidateResult], total: int) -> Table:
    table = Table(title=f"Local chat models: {total} everyday questions (FR + EN), JSON, speed")
    for column in ("model", "MB", "load s", "right FR", "right EN", "right all"):
        table.add_column(column, no_wrap=True, justify="left" if column == "model" else "right")
    for column in ("answer p50 s", "answer p95 s", "out tok/s"):
        table.add_column(column, no_wrap=True, justify="right")
    for column in ("JSON valid", "intent ok", "JSON p50 s"):
        table.add_column(f"{column} (full / compact)", no_wrap=True, justify="right")
    for r in results:
        if r.error is not None:
            table.add_row(r.name, *["—"] * 11)
            continue
        share = f"{r.right_total}/{r.asked_total} ({r.right_total / max(1, r.asked_total):.0%})"
        speed = [
            _p(r.answer_seconds, 0.5),
            _p(r.answer_seconds, 0.95),
            f"{r.plain_tokens / r.plain_seconds:.1f}" if r.plain_seconds else "—",
            "—" if r.baseline else _per_contract(r.json_valid),
            "—" if r.baseline else _per_contract(r.json_intent_ok),
            "—"
            if r.baseline
            else " / ".join(_p(r.json_seconds.get(contract, []), 0.5) for contract in CONTRACTS),
        ]
        table.add_row(
            r.name,
            f"{r.size_mb:.0f}" if r.size_mb else "—",
            f"{r.load_s:.1f}" if r.load_s is not None else "—",
            f"{r.right.get('fr', 0)}/{r.asked.get('fr', 0)}",
            f"{r.right.get('en', 0)}/{r.asked.get('en', 0)}",
            share,
            *speed,
        )
    return table


def _markdown(table: Table) -> str:
    headers = [str(column.header) for column in table.columns]
    cells = [[str(cell) for cell in column.cells] for column in table.columns]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in zip(*cells, strict=True)]
    return "\n".join(lines)


def _p(values: Sequence[float], fraction: float) -> str:
    if not values:
        return "—"
    if fraction == 0.5:
        return f"{statistics.median(values):.2f}"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]:.2f}"


def _load_average() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=None, help="question set (JSON lines)")
    parser.add_argument(
        "--model",
        action="append",
        default=None,
        choices=[model.name for model in BUNDLED_MODELS],
        help="a bundled model to measure (repeatable; default: all)",
    )
    args = parser.parse_args()
    asyncio.run(run(settings=Settings(), console=Console(), data=args.data, models=args.model))


if __name__ == "__main__":
    main()
