"""Benchmarks behind `eko bench …`: each suite measures one thing and prints a table.

Suites import only what they measure and are loaded on demand by eko/cli/bench.py, so the
rest of the CLI never pays for their imports.
"""

from pathlib import Path

# Data sets the quality benchmarks read, by default from ../shared/data (relative to the
# current directory: a checkout next to the shared data); `--data PATH` overrides each.
DATA_DIR = Path("..") / "shared" / "data"
LOCOMO_FILE = "locomo-dev-3.json"
QQP_FILE = "qqp-dev-3000.jsonl.gz"
