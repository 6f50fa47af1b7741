"""What memory extraction stores, scored by content: `eko bench extract`.

Each labelled exchange (bench/eko_bench/extraction_data.py) goes through the product's
extraction call — the same prompt (eko/memory/extraction.py `extraction_prompt`), the same
structured output, temperature and token cap, at background priority, on the configured
providers — with no open curiosity. What it would store is scored against the labels:
- **right items** (precision): stored items that match an expected or acceptable label;
- **expected found** (recall): expected labels matched by a stored item;
- **nothing-to-learn exchanges with something stored**;
- seconds per exchange (median) and failed calls.
The same calls are also scored before the filter (eko/memory/extraction_filter.py): what the
model proposed, to show what the filter removes.

Trivial baselines in the same run, on the same exchanges: store the user's whole message;
store each first-person sentence of it that is not a question (a rule); store nothing.

Splits: **dev** (`data/extraction_dev.jsonl`, read while the prompt was written) and **test**
(`--data`, default `data/extraction_heldout.jsonl`: 40 exchanges written by another session
before any extraction change). `--split test` by default.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from eko.config import Settings
from eko.llm.errors import LLMError
from eko.llm.providers.factory import build_providers
from eko.llm.runtime import LLMRuntime
from eko.llm.types import Provider
from eko.memory.extraction import ExchangeText, ask_extraction, extraction_prompt, kept_items
from eko.prompts.library import PromptLibrary
from eko_bench.extraction_data import (
    DEV_FILE,
    TEST_FILE,
    LabelledExchange,
    load_exchanges,
    right_items,
)

Split = Literal["dev", "test", "all"]
Items = list[tuple[str, str]]
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
_FIRST_PERSON = re.compile(
    r"\b(i|i'm|im|i've|my|we|we're|our|je|j|mon|ma|mes|nous|notre|nos|on|moi)\b", re.IGNORECASE
)


@dataclass
class Row:
    label: str
    split: str
    exchanges: int = 0
    right: list[bool] = field(default_factory=list)
    found: list[bool] = field(default_factory=list)
    stored_on_nothing: int = 0
    nothing_exchanges: int = 0
    failed: int = 0
    seconds: list[float] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)

    def add(self, exchange: LabelledExchange, items: Items) -> None:
        right, found = right_items(exchange, items)
        self.exchanges += 1
        self.right += right
        self.found += found
        if not exchange.expected:
            self.nothing_exchanges += 1
            self.stored_on_nothing += bool(items)
        self.wrong += [
            f"{exchange.id} [{s}] {c}" for (s, c), ok in zip(items, right, strict=True) if not ok
        ]
        self.missed += [
            f"{exchange.id} {label.about}"
            for label, ok in zip(exchange.expected, found, strict=True)
            if not ok
        ]


def whole_message(exchange: LabelledExchange) -> Items:
    return [(exchange.user_name, exchange.user)]


def first_person_sentences(exchange: LabelledExchange) -> Items:
    sentences = [s.strip() for s in _SENTENCE_END.split(exchange.user) if s.strip()]
    return [
        (exchange.user_name, s)
        for s in sentences
        if not s.endswith("?") and _FIRST_PERSON.search(s.replace("’", "'"))
    ]


def nothing(exchange: LabelledExchange) -> Items:
    return []


BASELINES: tuple[tuple[str, Callable[[LabelledExchange], Items]], ...] = (
    ("baseline: store the user's message", whole_message),
    ("baseline: first-person sentences (rule)", first_person_sentences),
    ("baseline: store nothing", nothing),
)


async def run(
    *,
    settings: Settings,
    console: Console,
    data: Path | None = None,
    split: Split = "test",
    limit: int | None = None,
    providers: Sequence[Provider] | None = None,
) -> list[Row]:
    """`providers`: stand-ins for the configured ones (tests)."""
    splits: dict[str, list[LabelledExchange]] = {}
    if split in ("dev", "all"):
        splits["dev"] = load_exchanges(DEV_FILE)[:limit]
    if split in ("test", "all"):
        splits["test"] = load_exchanges(data or TEST_FILE)[:limit]
    chosen = list(providers) if providers is not None else build_providers(settings)
    console.print(
        ", ".join(f"{name}: {len(rows)} exchanges" for name, rows in splits.items())
        + f" (test from {data or TEST_FILE}); first provider: {settings.llm_providers[0].kind}"
    )
    rows: list[Row] = []
    runtime = LLMRuntime(chosen)
    prompts = PromptLibrary()
    try:
        for name, exchanges in splits.items():
            for label, baseline in BASELINES:
                row = Row(label, name)
                for exchange in exchanges:
                    row.add(exchange, baseline(exchange))
                rows.append(row)
            row = Row("Eko's extraction, configured model", name)
            unfiltered = Row("  the same calls, before the filter", name)
            for number, exchange in enumerate(exchanges, start=1):
                proposed, kept = await _extract(runtime, prompts, settings, exchange, row)
                row.add(exchange, kept)
                unfiltered.add(exchange, proposed)
                console.print(f"  {name} {number}/{len(exchanges)}", end="\r")
            rows += [row, unfiltered]
    finally:
        if providers is None:
            for provider in chosen:
                await provider.aclose()
    console.print(_table(rows))
    for row in rows:
        if row.label.startswith("Eko") and (row.wrong or row.missed):
            console.print(
                f"[dim]{row.split} — wrong: {escape('; '.join(row.wrong)) or '-'}\n"
                f"missed: {escape('; '.join(row.missed)) or '-'}[/dim]",
                soft_wrap=True,
            )
    return rows


async def _extract(
    runtime: LLMRuntime,
    prompts: PromptLibrary,
    settings: Settings,
    exchange: LabelledExchange,
    row: Row,
) -> tuple[Items, Items]:
    """(what the model proposed, what the product would write)."""
    text = ExchangeText(
        assistant=settings.assistant_name,
        user_name=exchange.user_name,
        user=exchange.user,
        reply=exchange.reply,
        previous=exchange.previous,
    )
    began = time.perf_counter()
    try:
        data = await ask_extraction(
            runtime,
            extraction_prompt(prompts, text),
            max_tokens=settings.memory_extract_max_tokens,
        )
    except LLMError:
        row.failed += 1
        return [], []
    finally:
        row.seconds.append(time.perf_counter() - began)
    proposed = [(item.subject, item.content) for item in data.items]
    return proposed, [(item.subject, item.content) for item in kept_items(data, text)]


def _share(flags: Sequence[bool]) -> str:
    if not flags:
        return "-"
    return f"{sum(flags)}/{len(flags)} ({sum(flags) / len(flags):.0%})"


def _table(rows: Sequence[Row]) -> Table:
    table = Table(title="eko bench extract — what memory extraction would store, by content")
    for column in (
        "extractor",
        "split",
        "exchanges",
        "right items (precision)",
        "expected found (recall)",
        "stored on nothing-to-learn",
        "failed calls",
        "s per exchange (p50)",
    ):
        table.add_column(column)
    for row in rows:
        table.add_row(
            row.label,
            row.split,
            str(row.exchanges),
            _share(row.right),
            _share(row.found),
            f"{row.stored_on_nothing}/{row.nothing_exchanges}",
            str(row.failed) if row.seconds else "-",
            f"{statistics.median(row.seconds):.1f}" if row.seconds else "-",
        )
    table.caption = (
        "right = the stored item matches a labelled item of its exchange (every word group, "
        "bench/eko_bench/extraction_data.py); expected found = a labelled must-store item was "
        "stored. Precision counts every stored item, whatever its kind."
    )
    return table
