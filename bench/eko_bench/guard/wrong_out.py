"""The served pairs the data does not vouch for, written for reading (`--wrong-out`).

One JSON line per (backend, set, rule, split, served pair) of the shipped modes: the asked
question, the pair's own stored question, the stored question that answered, its cosine, the
data's label, and why it is listed (`not_duplicate`, `other_stored`, `known_wrong`). The
baselines are left out: "always serve the nearest" would list most of the file.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from eko_bench.guard.report import QualityReport, Row

DEFAULT_WRONG_OUT = Path(tempfile.gettempdir()) / "eko-bench-guard-wrong.jsonl"


def wrong_rows(report: QualityReport, backend: str) -> Iterable[dict[str, object]]:
    rows: list[Row] = report.shipped
    for row in rows:
        for split, figures in row.by_split.items():
            for wrong in figures.wrong:
                pair = wrong.asked.pair
                yield {
                    "backend": backend,
                    "set": row.name,
                    "rule": row.config.label,
                    "split": split,
                    "language": wrong.asked.language,
                    "question": pair.text_b,
                    "own": pair.text_a,
                    "served": wrong.served,
                    "score": round(wrong.score, 4),
                    "label": pair.label,
                    "not_duplicate": wrong.not_duplicate,
                    "other_stored": wrong.other_stored,
                    "known_wrong": wrong.known_wrong,
                }


def write_wrong(handle: IO[str], report: QualityReport, backend: str) -> int:
    """Append this backend's rows; returns how many were written."""
    written = 0
    for row in wrong_rows(report, backend):
        handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        written += 1
    return written
