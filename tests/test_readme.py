"""The README is for users: short, its first commands, every link and command real.

The full list of settings lives in docs/configuration.md, the benchmark tables in
docs/benchmarks.md; both are checked here too.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer

from eko.cli import app
from eko.config import Settings

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
MAX_LINES = 300

# Variables the README and docs may name that are not settings of the server.
NOT_SETTINGS = {"EKO_TEST_DATABASE_URL", "EKO_BENCH_DATABASE_URL", "EKO_TEST_WORKERS"}


def test_the_readme_stays_short() -> None:
    assert len(README.splitlines()) <= MAX_LINES


def test_the_first_commands_are_serve_then_test() -> None:
    first_block = re.search(r"```bash\n(.*?)```", README, re.DOTALL)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands[:2] == ["scripts/serve", "scripts/test"]
    for step in ("eko users create", "curl -s -X POST", "eko chat --server"):
        assert step in README


def test_every_setting_is_documented_in_full() -> None:
    full = (DOCS / "configuration.md").read_text(encoding="utf-8")
    missing = [name for name in Settings.model_fields if f"`EKO_{name.upper()}`" not in full]
    assert missing == []


@pytest.mark.parametrize("path", ["README.md", "docs/configuration.md", "docs/benchmarks.md"])
def test_every_variable_named_is_a_setting(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    known = {f"EKO_{name.upper()}" for name in Settings.model_fields} | NOT_SETTINGS
    named = set(re.findall(r"\bEKO_[A-Z0-9_]*[A-Z0-9]\b", text))
    assert sorted(named - known) == []


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(markdown: str) -> set[str]:
    text = re.sub(r"```.*?```", "", markdown, flags=re.DOTALL)
    return {_slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE)}


@pytest.mark.parametrize(
    "path", ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in DOCS.glob("*.md"))]
)
def test_every_local_link_resolves(path: str) -> None:
    source = ROOT / path
    text = source.read_text(encoding="utf-8")
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        file_part, _, anchor = target.partition("#")
        linked = (source.parent / file_part).resolve() if file_part else source
        if not linked.exists() or (
            anchor
            and linked.suffix == ".md"
            and anchor not in _anchors(linked.read_text(encoding="utf-8"))
        ):
            broken.append(target)
    assert broken == []


def test_the_readme_links_the_docs() -> None:
    for doc in ("benchmarks", "configuration", "api", "architecture", "deploy"):
        assert f"](docs/{doc}.md" in README


def _group() -> Any:
    return typer.main.get_command(app)


def test_every_command_group_is_in_the_readme() -> None:
    group = _group()
    names = group.list_commands(typer.Context(group))
    assert "users" in names and "rooms" in names and "bench" in names
    missing = [name for name in names if f"eko {name}" not in README]
    assert missing == []


def test_every_eko_command_shown_exists() -> None:
    """`eko X`, `eko X y|z` in the README: X a command, y and z its subcommands."""
    root = _group()
    context = typer.Context(root)
    shown = re.findall(r"\beko ([a-z][a-z-]*)(?: ([a-z][a-z-]*(?:\\?\|[a-z][a-z-]*)*))?", README)
    assert len(shown) > 20
    unknown = []
    for name, sub in shown:
        command = root.get_command(context, name)
        if command is None:
            unknown.append(name)
            continue
        subcommands = getattr(command, "commands", None)
        if subcommands is None or not sub:
            continue  # a plain command: what follows is an argument
        for each in sub.replace("\\|", "|").split("|"):
            if each not in subcommands:
                unknown.append(f"{name} {each}")
    assert unknown == []
