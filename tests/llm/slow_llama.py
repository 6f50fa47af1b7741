"""A slow scripted llama.cpp for the local model's line: every generation takes `delay` seconds
(token by token, consulting the stopping criteria like llama.cpp), streams when asked, and
answers JSON-schema calls (the orchestrator's) with a valid compact proposal."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eko.llm.providers.local import LocalLlamaProvider

from .fake_llama import FakeLlama, Loader

COMPACT = '{"intent": "general_question", "context_level": "light"}'
ANSWER = "Voici une vraie réponse."


class SlowLlama(FakeLlama):
    def __init__(self, delay: float = 0.4, *, answer: str = ANSWER) -> None:
        super().__init__(delay=delay)
        self.answer = answer
        # When set to an Event: every generation waits for it before its first word.
        self.release: threading.Event | None = None
        self.stopped = 0  # generations cut by their stopping criteria
        self.finished = 0  # generations that ran to their end

    def create_completion(self, prompt: Any, **kwargs: Any) -> Any:
        stream = kwargs.pop("stream", False)
        text = COMPACT if "grammar" in kwargs else self.answer
        self.calls.append((prompt, kwargs))
        pieces = self._generate(text, kwargs["stopping_criteria"])
        if stream:
            return pieces
        parts = [chunk["choices"][0]["text"] for chunk in pieces]
        return {
            "choices": [{"text": "".join(parts), "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": len(parts)},
        }

    def _generate(self, text: str, stop: Any) -> Iterator[dict[str, Any]]:
        words = text.split(" ")
        pause = self.delay / max(len(words), 1)
        self.threads.add(threading.get_ident())
        while self.release is not None and not self.release.is_set():
            # Held until the test has everyone it wants in line (not a time: a loaded CI
            # machine can take longer than any delay to get the others queued).
            if stop(None, None):
                self.stopped += 1
                return
            time.sleep(0.005)
        for index, word in enumerate(words):
            ends = time.monotonic() + pause
            while time.monotonic() < ends:
                if stop(None, None):
                    self.stopped += 1
                    return
                time.sleep(0.005)
            yield {"choices": [{"text": word if index == 0 else f" {word}", "finish_reason": None}]}
        self.finished += 1
        yield {"choices": [{"text": "", "finish_reason": "stop"}]}


def slow_local(tmp_path: Path, llama: SlowLlama, **kwargs: Any) -> LocalLlamaProvider:
    """A LocalLlamaProvider on `llama` (no real model, no grammar compiler)."""
    path = tmp_path / "slow.gguf"
    path.write_bytes(b"GGUF")
    kwargs.setdefault("prompt_cache_bytes", 0)
    return LocalLlamaProvider(
        path,
        n_ctx=32768,
        n_threads=1,
        loader=Loader(llama),
        grammar_factory=lambda schema, llama: ("grammar", schema),
        **kwargs,
    )
