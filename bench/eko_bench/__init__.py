"""Benchmarks behind `eko bench …`: each suite measures one thing and prints a table.

A package of its own (distribution `eko-bench`, in bench/ of the repository): it depends on
`eko`, the server never imports it. eko/cli/bench.py imports `eko_bench.cli` when `eko bench`
runs; the suites import only what they measure and are loaded on demand by that CLI, so the
rest of it never pays for their imports.
"""

from pathlib import Path

# Data sets the quality benchmarks read, by default from ../shared/data (relative to the
# current directory: a checkout next to the shared data); `--data PATH` overrides each.
DATA_DIR = Path("..") / "shared" / "data"
LOCOMO_FILE = "locomo-dev-3.json"
QQP_FILE = "qqp-dev-3000.jsonl.gz"
