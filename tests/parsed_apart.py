"""Python files parsed with `ast` in a process of their own, for the tests that read the code.

CPython 3.11 keeps the AST converter's recursion depth in interpreter-wide state, so a parse
that runs while another thread of the same process parses (a test's server, a library reading
a docstring) fails with a spurious `SystemError: AST constructor recursion depth mismatch`
(python/cpython#106905). It failed the layering tests once in CI; a fresh process has no other
thread.
"""

from __future__ import annotations

import ast
import pickle
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

_PARSE = """
import ast, pickle, sys
paths = sys.stdin.read().splitlines()
trees = {p: ast.parse(open(p, encoding="utf-8").read(), p) for p in paths}
sys.stdout.buffer.write(pickle.dumps(trees))
"""


def parsed_apart(paths: Iterable[Path]) -> dict[Path, ast.Module]:
    """Each file's module tree, keyed by the path given."""
    given = {str(path): path for path in paths}
    done = subprocess.run(
        [sys.executable, "-c", _PARSE],
        input="\n".join(given).encode(),
        capture_output=True,
        check=True,
    )
    trees: dict[str, ast.Module] = pickle.loads(done.stdout)
    return {given[name]: tree for name, tree in trees.items()}
