"""`--summarizer model` and `--expander model`: the configured model, each answer cached on
disk by its input's hash.

The key is the SHA-256 of everything that shapes the answer (model, messages, schema, token
limit, temperature), so a rerun on the same conversations asks the model nothing, and a
changed prompt or model asks again. One JSON file per answer under <home>/bench-cache/.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict
from pathlib import Path

from eko.llm.types import Provider, ProviderRequest, ProviderResponse, Usage


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
