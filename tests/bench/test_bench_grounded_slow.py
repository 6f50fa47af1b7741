"""Grounded answers with the bundled model, through the API: in a fresh room, "What
instruments does my sister play?" gets no instrument (it used to get "Your sister plays the
piano and the violin.")."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from eko.config import Settings
from eko_bench.bench_grounded import run
from eko_bench.llm_quality import normalise

pytestmark = pytest.mark.slow

INSTRUMENTS = [
    "piano",
    "violin",
    "violon",
    "guitar",
    "guitare",
    "cello",
    "violoncelle",
    "flute",
    "drums",
    "batterie",
    "saxophone",
    "trumpet",
    "trompette",
    "harp",
    "harpe",
    "clarinet",
    "clarinette",
    "ukulele",
    "bass",
    "basse",
    "keyboard",
]


async def test_the_bundled_model_invents_no_instrument_for_an_unknown_sister(
    tmp_path: Path,
) -> None:
    data = tmp_path / "questions.jsonl"
    question = {
        "id": "sister",
        "lang": "en",
        "split": "test",
        "kind": "unstated",
        "history": [],
        "question": "What instruments does my sister play?",
        "expected": [],
    }
    data.write_text(json.dumps(question) + "\n", encoding="utf-8")
    settings = Settings(
        _env_file=None,
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
        settings=settings,
        console=Console(file=output, width=250),
        data=data,
        split="all",
        compare_today=False,
    )
    (reply,) = result.replies
    assert not reply.fallback, output.getvalue()
    words = normalise(reply.answer).split()
    assert not [w for w in words if w in INSTRUMENTS], reply.answer
    assert reply.dont_know, reply.answer
