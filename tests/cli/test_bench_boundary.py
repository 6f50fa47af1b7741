"""The benchmarks are their own package (eko_bench, in bench/): the server never imports them.

Only eko/cli/bench.py, the `eko bench` entry, imports them, and only when that command runs;
without them, `eko bench …` exits with how to install them.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eko.cli import app
from eko.cli import bench as bench_entry
from tests.parsed_apart import parsed_apart

EKO = Path(bench_entry.__file__).resolve().parent.parent
ENTRY = EKO / "cli" / "bench.py"


def _names_imported(tree: ast.Module) -> set[str]:
    """Modules a file (parsed: `tree`) imports: import statements, and
    importlib.import_module("…") literals."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value)
    return names


def _is_bench(name: str) -> bool:
    return name == "eko_bench" or name.startswith(("eko_bench.", "eko.bench"))


def test_no_module_of_the_server_imports_the_benchmarks() -> None:
    trees = parsed_apart(sorted(EKO.rglob("*.py")))
    offenders = {
        str(path.relative_to(EKO.parent)): sorted(filter(_is_bench, _names_imported(tree)))
        for path, tree in trees.items()
        if path != ENTRY
    }
    assert {path: names for path, names in offenders.items() if names} == {}
    assert not (EKO / "bench").exists()
    # The entry imports exactly the benchmarks' CLI, and lazily (inside a function).
    tree = trees[ENTRY]
    assert _names_imported(tree) & {"eko_bench", "eko_bench.cli"} == {"eko_bench.cli"}
    top_level = {
        alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names
    } | {node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.module}
    assert not any(_is_bench(name) for name in top_level)


def test_the_server_app_loads_without_the_benchmarks() -> None:
    code = (
        "import sys; sys.modules['eko_bench'] = None\n"
        "from eko.api.app import create_app\n"
        "import eko.cli.app, eko.wiring\n"
        "assert not [m for m in sys.modules if m.startswith('eko_bench') and sys.modules[m]]\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_eko_bench_help_lists_the_suites() -> None:
    result = CliRunner().invoke(app, ["bench", "--help"])
    assert result.exit_code == 0, result.output
    for suite in ("llm", "reply", "guard", "context", "recall", "load", "all"):
        assert suite in result.output


@pytest.fixture
def without_benchmarks(monkeypatch: pytest.MonkeyPatch) -> None:
    # An import of a name set to None in sys.modules raises ModuleNotFoundError.
    for name in [m for m in sys.modules if m == "eko_bench" or m.startswith("eko_bench.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "eko_bench", None)


@pytest.mark.usefixtures("without_benchmarks")
@pytest.mark.parametrize("args", [[], ["llm"], ["guard", "--lookup", "--backend", "sqlite"]])
def test_without_the_benchmarks_eko_bench_says_how_to_install_them(args: list[str]) -> None:
    result = CliRunner().invoke(bench_entry.bench_app(), args, env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "not installed" in result.output
    assert "pip install -e ./bench" in result.output
    assert "scripts/setup --dev" in result.output


@pytest.mark.usefixtures("without_benchmarks")
def test_without_the_benchmarks_the_help_says_so() -> None:
    result = CliRunner().invoke(bench_entry.bench_app(), ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "Not installed" in result.output and "pip install -e ./bench" in result.output
