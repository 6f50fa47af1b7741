"""Imports point downward only, and no two packages import each other (docs: DESIGN.md, layers).

Every module under eko/ is parsed with `ast` (not imported): each `import eko…` and
`from eko… import …` counts, at module level, inside a function (a lazy import) or under
TYPE_CHECKING alike.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.parsed_apart import parsed_apart

ROOT = Path(__file__).resolve().parents[1]

# Top to bottom. A module belongs to the longest unit that prefixes its name; a unit may import
# its own layer and the layers below. `eko` itself (the version) is on the ground floor.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"eko.cli", "eko.api", "eko.web"}),
    frozenset({"eko.wiring"}),  # the composition root: may import anything below it
    # The message pipeline, its docs scopes (eko.chat.docs) and web search (eko.chat.websearch).
    frozenset({"eko.chat"}),
    frozenset({"eko.chain"}),
    # The chain's tools (eko/chain/tools) are the design's tools/ package.
    frozenset({"eko.lobby", "eko.chain.tools"}),
    frozenset({"eko.jobs"}),
    frozenset({"eko.events"}),
    frozenset({"eko.memory"}),
    frozenset({"eko.guard"}),
    frozenset({"eko.llm"}),
    frozenset({"eko.embed"}),
    # Accounts: passwords, sessions, invitations (over the store).
    frozenset({"eko.accounts"}),
    frozenset({"eko.store"}),
    frozenset({"eko.prompts"}),
    # eko.text: text normalisation shared by every layer, importing nothing from eko.
    frozenset({"eko.config", "eko.logging", "eko.text", "eko"}),
)
# Upward imports tolerated while being removed, as (importing unit, imported unit): an import
# from the first into the second passes. The last one, chain -> chat, was removed in #31
# (7945e68); an entry whose violation is gone fails test_known_violations_still_exist.
KNOWN_VIOLATIONS: frozenset[tuple[str, str]] = frozenset()


def within(name: str, unit: str) -> bool:
    return name == unit or name.startswith(f"{unit}.")


def known(edge: tuple[str, str]) -> bool:
    source, target = edge
    return any(within(source, a) and within(target, b) for a, b in KNOWN_VIOLATIONS)


@dataclass(frozen=True, slots=True)
class Module:
    name: str
    path: Path
    is_package: bool

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]


def find_modules(root: Path) -> dict[str, Module]:
    modules = {}
    for path in sorted((root / "eko").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        modules[name] = Module(name, path, is_package)
    return modules


def imported(module: Module, tree: ast.Module, modules: Mapping[str, Module]) -> Iterator[str]:
    """The eko modules `module` (parsed: `tree`) imports (a name imported from a package: the
    package, unless the name is a module of it)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, or `level - 1` packages up
                package = module.package.split(".")
                anchor = package[: len(package) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            if target == "eko" or target.startswith("eko."):
                while target not in modules and "." in target:
                    target = target.rpartition(".")[0]  # `import eko.x.name`
                yield target


def unit_of(name: str) -> str:
    units = [unit for layer in LAYERS for unit in layer]
    return max((unit for unit in units if within(name, unit)), key=len, default="")


def rank_of(name: str) -> int:
    unit = unit_of(name)
    return next(rank for rank, layer in enumerate(LAYERS) if unit in layer)


def import_graph(root: Path) -> set[tuple[str, str]]:
    modules = find_modules(root)
    trees = parsed_apart(module.path for module in modules.values())
    return {
        (module.name, target)
        for module in modules.values()
        for target in imported(module, trees[module.path], modules)
        if target != module.name
    }


def upward_imports(edges: set[tuple[str, str]]) -> set[tuple[str, str]]:
    return {(source, target) for source, target in edges if rank_of(target) < rank_of(source)}


def package_of(name: str, packages: set[str]) -> str:
    return name if name in packages else name.rpartition(".")[0]


def related(a: str, b: str) -> bool:
    """One package inside the other: a package and its subpackages are one unit."""
    return a == b or a.startswith(f"{b}.") or b.startswith(f"{a}.")


def package_cycles(edges: set[tuple[str, str]], packages: set[str]) -> list[list[str]]:
    """Strongly connected groups of packages (Tarjan), imports within a package tree aside."""
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target in edges:
        a, b = package_of(source, packages), package_of(target, packages)
        if not related(a, b):
            graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


@pytest.fixture(scope="module")
def edges() -> set[tuple[str, str]]:
    return import_graph(ROOT)


def test_every_module_has_a_layer() -> None:
    assert [name for name in find_modules(ROOT) if not unit_of(name)] == []


def test_imports_point_downward(edges: set[tuple[str, str]]) -> None:
    assert sorted(edge for edge in upward_imports(edges) if not known(edge)) == []


def test_known_violations_still_exist(edges: set[tuple[str, str]]) -> None:
    # Once fixed, an entry leaves KNOWN_VIOLATIONS, so the violation cannot come back unnoticed.
    upward = upward_imports(edges)
    fixed = {
        (a, b)
        for a, b in KNOWN_VIOLATIONS
        if not any(within(source, a) and within(target, b) for source, target in upward)
    }
    assert sorted(fixed) == []


def test_no_import_cycle_between_packages(edges: set[tuple[str, str]]) -> None:
    packages = {m.name for m in find_modules(ROOT).values() if m.is_package}
    assert package_cycles(edges, packages) == []


def write(root: Path, name: str, source: str) -> None:
    path = root / Path(*name.split("."))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_suffix(".py").write_text(source, encoding="utf-8")


def test_the_checks_catch_lazy_upward_imports_and_cycles(tmp_path: Path) -> None:
    for package in ("eko", "eko.store", "eko.memory", "eko.cli", "eko.api"):
        write(tmp_path, f"{package}.__init__", "")
    write(tmp_path, "eko.store.rows", "def f():\n    from eko.memory import items\n")
    write(tmp_path, "eko.memory.items", "from eko.store.rows import f\n")
    write(tmp_path, "eko.cli.app", "import eko.api.app\n")
    write(tmp_path, "eko.api.app", "from eko.cli import app\n")
    edges = import_graph(tmp_path)
    assert upward_imports(edges) == {("eko.store.rows", "eko.memory.items")}
    packages = {m.name for m in find_modules(tmp_path).values() if m.is_package}
    assert package_cycles(edges, packages) == [
        ["eko.api", "eko.cli"],
        ["eko.memory", "eko.store"],
    ]
