"""Local chat model speed: output tokens per second, plain and under a JSON-schema grammar.

Runs the configured local GGUF (default: the bundled Gemma 3 270M) through LocalLlamaProvider,
the same path a reply takes, so the numbers include transcript rendering and prompt
evaluation. Wired into `eko bench llm`; also `python -m bench.bench_llm`.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table

from eko.config import Settings
from eko.llm.errors import ProviderError
from eko.llm.providers.local import LocalLlamaProvider
from eko.llm.types import ChatMessage, ProviderRequest

MAX_TOKENS = 64
SYSTEM = ChatMessage("system", "Eko is a friendly assistant who gives detailed answers.")
PLAIN_PROMPTS = (
    "Tell me a story about a lighthouse keeper and a storm.",
    "Explain how bread rises, step by step.",
    "Raconte-moi une histoire sur un chat qui voyage en train.",
)
JSON_PROMPTS = (
    "I moved to Lyon last year and I work as a baker.",
    "My sister Ana plays the cello in a quartet in Porto.",
    "We ship the new release on Friday if the tests pass.",
)
# Bounded strings, as real callers use: an unbounded string can run past max_tokens.
FACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "subject": {"type": "string", "maxLength": 24},
        "fact": {"type": "string", "maxLength": 60},
        "confidence": {"type": "number"},
    },
    "required": ["subject", "fact", "confidence"],
}
JSON_SYSTEM = ChatMessage("system", "Extract one fact from the message as JSON.")


@dataclass(frozen=True, slots=True)
class BenchRow:
    mode: str  # "plain" or "json"
    prompt: str
    input_tokens: int
    output_tokens: int
    seconds: float
    valid: bool | None = None  # json rows: did the answer parse
    answer: str = ""
    truncated: bool = False

    @property
    def tokens_per_s(self) -> float:
        return self.output_tokens / self.seconds if self.seconds > 0 else 0.0


async def run(*, settings: Settings, console: Console) -> list[BenchRow]:
    """Measure, print a table, and return the rows (for callers that store or compare them)."""
    provider = LocalLlamaProvider(
        settings.local_model_path,
        n_ctx=settings.local_n_ctx,
        n_threads=settings.local_threads,
    )
    rows: list[BenchRow] = []
    try:
        started = time.perf_counter()
        try:
            await provider.load()
        except ProviderError as exc:
            console.print(f"[red]local model unavailable:[/red] {exc}")
            return rows
        load_s = time.perf_counter() - started
        console.print(
            f"model [bold]{provider.model}[/bold] ({provider.model_path}), "
            f"loaded in {load_s:.2f}s, n_ctx={provider.n_ctx}, threads={provider.n_threads}"
        )
        # One unmeasured call: the first generation allocates compute buffers.
        await provider.generate(
            ProviderRequest(messages=(ChatMessage("user", "Hi"),), max_tokens=4, temperature=0)
        )
        for prompt in PLAIN_PROMPTS:
            rows.append(await _measure(provider, "plain", (SYSTEM,), prompt, None))
        for prompt in JSON_PROMPTS:
            rows.append(await _measure(provider, "json", (JSON_SYSTEM,), prompt, FACT_SCHEMA))
    finally:
        await provider.aclose()
    console.print(_table(rows))
    for row in rows:
        if row.valid is False:
            cut = " (cut at max_tokens)" if row.truncated else ""
            console.print(f"invalid JSON{cut}: {row.answer!r}")
    for mode in ("plain", "json"):
        selected = [row for row in rows if row.mode == mode]
        tokens = sum(row.output_tokens for row in selected)
        seconds = sum(row.seconds for row in selected)
        if seconds > 0:
            console.print(
                f"{mode}: {tokens / seconds:.1f} output tokens/s over {len(selected)} calls"
            )
    return rows


async def _measure(
    provider: LocalLlamaProvider,
    mode: str,
    system: tuple[ChatMessage, ...],
    prompt: str,
    schema: dict[str, Any] | None,
) -> BenchRow:
    request = ProviderRequest(
        messages=(*system, ChatMessage("user", prompt)),
        json_schema=schema,
        max_tokens=MAX_TOKENS,
        temperature=0.7,
    )
    started = time.perf_counter()
    response = await provider.generate(request)
    seconds = time.perf_counter() - started
    valid: bool | None = None
    if schema is not None:
        try:
            json.loads(response.text)
            valid = True
        except ValueError:
            valid = False
    return BenchRow(
        mode=mode,
        prompt=prompt,
        input_tokens=response.usage.input_tokens,
        output_tokens=response.usage.output_tokens,
        seconds=seconds,
        valid=valid,
        answer=response.text,
        truncated=response.truncated,
    )


def _table(rows: list[BenchRow]) -> Table:
    table = Table(title="Local chat model, per call (wall clock, prompt evaluation included)")
    table.add_column("mode", no_wrap=True)
    table.add_column("prompt", max_width=28, overflow="ellipsis", no_wrap=True)
    table.add_column("in", justify="right", no_wrap=True)
    table.add_column("out", justify="right", no_wrap=True)
    table.add_column("s", justify="right", no_wrap=True)
    table.add_column("tok/s", justify="right", no_wrap=True)
    table.add_column("JSON", justify="center", no_wrap=True)
    for row in rows:
        table.add_row(
            row.mode,
            row.prompt,
            str(row.input_tokens),
            str(row.output_tokens),
            f"{row.seconds:.2f}",
            f"{row.tokens_per_s:.1f}",
            "" if row.valid is None else ("yes" if row.valid else "no"),
        )
    return table


if __name__ == "__main__":
    asyncio.run(run(settings=Settings(), console=Console()))
