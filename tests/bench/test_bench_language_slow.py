"""`eko bench language` on the real stack: the bundled model and embedder, through the API.

The dialog is the one a new user met (README's serve check): a French statement, then an
English question. With the writer told the message's language, the bundled model must answer
the English question in English (temperature 0: greedy, the same answer each run).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from eko.bench.bench_language import run
from eko.config import Settings

pytestmark = pytest.mark.slow


async def test_the_bundled_model_answers_in_the_language_of_the_question(tmp_path: Path) -> None:
    data = tmp_path / "dialogs.jsonl"
    dialog = {
        "id": "sister",
        "turns": [
            {"text": "Ma soeur Léa peint des aquarelles et joue du violon.", "lang": "fr"},
            {"text": "What instruments does my sister play?", "lang": "en"},
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
    )
    output = io.StringIO()
    (result,) = await run(
        settings=settings, console=Console(file=output, width=250), data=data, split="all"
    )
    first, second = result.replies
    assert not first.fallback and not second.fallback, output.getvalue()
    assert second.switched and second.language == "en", second.answer
    assert "reply_language stated (default)" in output.getvalue()
