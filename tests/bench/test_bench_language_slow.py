"""`eko bench language` on the real stack: the bundled model and embedder, through the API.

What holds for the bundled 1.5B model on every run measured: a first message is answered in
its own language (40 of 40), the replies are scored (a clear language each) and nothing falls
back. A reply right after a switch of language is not asserted: the model gets 15 of 17 right
(`eko bench language`, docs/benchmarks.md), so a test of one switch would fail by chance.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from eko.config import Settings
from eko_bench.bench_language import run

pytestmark = pytest.mark.slow


async def test_the_bench_scores_the_bundled_models_replies(tmp_path: Path) -> None:
    data = tmp_path / "dialogs.jsonl"
    dialog = {
        "id": "cat",
        "turns": [
            {"text": "I just adopted a cat named Miso.", "lang": "en"},
            {"text": "Quel nom ai-je donné à mon chat ?", "lang": "fr"},
        ],
    }
    data.write_text(json.dumps(dialog) + "\n", encoding="utf-8")
    settings = Settings(
        _env_file=None,
        llm_temperature=0,
        # Generous bounds: CI shares 2 cores; this checks what is said, not how fast.
        llm_providers=[{"kind": "local", "timeout_s": 600}],
        orchestrator_timeout_s=900,
        chat_writer_timeout_s=900,
        chat_message_deadline_s=1800,
        memory_extract_enabled=False,
        summaries_enabled=False,
        # Enough words to read the reply's language and what it claims; a longer reply only
        # costs CI minutes (the default is 200 tokens).
        llm_max_tokens=64,
    )
    output = io.StringIO()
    (result,) = await run(
        settings=settings, console=Console(file=output, width=250), data=data, split="all"
    )
    first, second = result.replies
    assert not first.fallback and not second.fallback, output.getvalue()
    assert first.language == "en" and first.right, first.answer
    assert second.switched and second.expected == "fr"
    assert second.language in ("fr", "en"), second.answer  # scored: a clear language
    assert "reply_language stated (default)" in output.getvalue()
