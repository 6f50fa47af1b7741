"""LoCoMo conversations as a history file for `eko rooms import` (docs/benchmarks.md, "Import and
reindex"): each conversation's first speaker as the user turns, the second as the assistant
turns, each turn with its speaker's name and its session's date, conversations one after the
other, cut to the first N turns.

    python -m eko_bench.locomo_history ../shared/data/locomo-dev-3.json history-700.json --turns 700
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from eko_bench.context.data import load_locomo


def history(data: Path, turns: int) -> list[dict[str, Any]]:
    """The first `turns` turns of the file's conversations as [{role, name, content,
    created_at}]."""
    out: list[dict[str, Any]] = []
    for conversation in load_locomo(data):
        user = conversation.speakers[0]
        for started, session in conversation.sessions:
            for turn in session:
                out.append(
                    {
                        "role": "user" if turn["speaker"] == user else "assistant",
                        "name": turn["speaker"],
                        "content": turn["text"],
                        "created_at": started.isoformat(),
                    }
                )
    return out[:turns]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="LoCoMo as a history for eko rooms import")
    parser.add_argument("data", type=Path, help="LoCoMo JSON")
    parser.add_argument("out", type=Path, help="the history file to write")
    parser.add_argument("--turns", type=int, default=700)
    args = parser.parse_args(argv)
    turns = history(args.data, args.turns)
    args.out.write_text(json.dumps(turns, ensure_ascii=False), encoding="utf-8")
    print(f"{len(turns)} turns written to {args.out}")


if __name__ == "__main__":
    main()
