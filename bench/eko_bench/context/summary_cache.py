"""`--summarizer model` and `--expander model` (bench context, bench recall): the configured
model, each answer cached on disk by its input's hash.

The key is the SHA-256 of everything that shapes the answer (model, messages, schema, token
limit, temperature), so a rerun on the same conversations asks the model nothing, and a
changed prompt or model asks again. One JSON file per answer under <home>/bench-cache/.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from eko.config import Settings
from eko.llm.providers import build_providers
from eko.llm.types import Provider, ProviderRequest, ProviderResponse, Usage
from eko_bench.stats import percentile


def request_key(model: str, request: ProviderRequest) -> str:
    payload = {
        "model": model,
        "messages": [asdict(m) for m in request.messages],
        "schema": request.json_schema,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    encoded = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


class DiskCachedProvider:
    """A Provider that answers from the cache when it can, and asks `inner` otherwise."""

    def __init__(self, inner: Provider, directory: Path) -> None:
        self._inner = inner
        self._directory = directory
        self.name, self.model = inner.name, inner.model
        self.hits = 0
        self.misses = 0
        self.errors = 0  # asked, and the model failed: nothing cached
        self.asked_ms: list[float] = []  # how long each answer asked of the model took

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        path = self._directory / f"{request_key(self._inner.model, request)}.json"
        if path.is_file():
            stored = json.loads(path.read_text(encoding="utf-8"))
            self.hits += 1
            return ProviderResponse(
                text=stored["text"], usage=Usage(**stored["usage"]), model=stored["model"]
            )
        started = time.perf_counter()
        try:
            response = await self._inner.generate(request)
        except Exception:
            self.errors += 1
            raise
        self.asked_ms.append((time.perf_counter() - started) * 1000)
        self.misses += 1
        if not response.truncated:  # a cut answer is not worth keeping
            self._directory.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(".tmp")
            partial.write_text(
                json.dumps(
                    {
                        "text": response.text,
                        "usage": asdict(response.usage),
                        "model": response.model,
                    },
                    ensure_ascii=False,
                ),
                encoding="utf-8",
            )
            partial.replace(path)  # atomic: an interrupted run leaves no half-written answer
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def cache_directory(home: Path, kind: str = "summaries") -> Path:
    """Where the answers of one kind of call are kept (summaries, expansions)."""
    return home / "bench-cache" / kind


def configured_model(settings: Settings, kind: str) -> tuple[list[Provider], str]:
    """The configured providers, each answer cached under <home>/bench-cache/<kind>/, and a
    description of them for the bench's title."""
    directory = cache_directory(settings.home, kind)
    providers: list[Provider] = [
        DiskCachedProvider(p, directory) for p in build_providers(settings)
    ]
    names = ", ".join(f"{p.name}:{p.model}" for p in providers)
    return providers, f"the configured model ({names}; cache {directory})"


def cache_counts(providers: Sequence[Provider]) -> str:
    """Answers reused and asked (DiskCachedProvider's counts), failures, model time."""
    hits = sum(getattr(p, "hits", 0) for p in providers)
    misses = sum(getattr(p, "misses", 0) for p in providers)
    errors = sum(getattr(p, "errors", 0) for p in providers)
    asked = [ms for p in providers for ms in getattr(p, "asked_ms", [])]
    line = f"{hits} answers reused, {misses} asked to the model"
    if errors:
        line += f", {errors} failed (not cached; those calls fell back)"
    if asked:
        line += (
            f"; model time per call p50 {percentile(asked, 0.5) / 1000:.1f} s, "
            f"p95 {percentile(asked, 0.95) / 1000:.1f} s"
        )
    return line
