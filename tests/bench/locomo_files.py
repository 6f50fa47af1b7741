"""Tiny LoCoMo-format files for the bench tests: one conversation of one session between Ana
and Ben, turns alternating from Ana."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def write_locomo(path: Path, texts: Sequence[str], qa: Sequence[dict[str, Any]]) -> Path:
    """`texts` as session 1's turns (dia ids D1:1, D1:2, …) and `qa` as its questions."""
    turns = [
        {"speaker": ("Ana", "Ben")[i % 2], "dia_id": f"D1:{i + 1}", "text": text}
        for i, text in enumerate(texts)
    ]
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns,
        },
        "qa": list(qa),
    }
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path
