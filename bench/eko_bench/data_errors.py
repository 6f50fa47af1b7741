"""One error for a benchmark data file that is not in the format its bench reads.

Loaders raise it naming the file, the line or record, and what is wrong; `eko bench …` turns
it into an error message and a non-zero exit instead of a traceback.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class BenchDataError(ValueError):
    """A data file a benchmark was given cannot be read as that benchmark's format."""


def json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line of a .jsonl or .jsonl.gz file."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise BenchDataError(f"{path}:{number}: not JSON ({exc.msg})") from exc
                if not isinstance(row, dict):
                    raise BenchDataError(f"{path}:{number}: expected a JSON object per line")
                yield number, row
    except (OSError, UnicodeDecodeError) as exc:  # gzip.BadGzipFile is an OSError
        raise BenchDataError(f"{path}: cannot be read as JSON lines ({exc})") from exc
