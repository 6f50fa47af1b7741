"""`eko cache list|search|show|obsolete|delete|prune|add`: audit the memory guard from a shell."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from eko.cli.common import console, fail, migrated_services, run
from eko.cli.ids import resolve_id_or_exit
from eko.embed.base import EmbeddingError
from eko.guard.scope import InvalidScope, Scope, lookup_scopes
from eko.guard.service import NotLearnable
from eko.store.guard_models import GuardEntry
from eko.wiring import Services

app = typer.Typer(help="The memory guard (semantic response cache).", no_args_is_help=True)

PersonaOpt = Annotated[
    str | None, typer.Option("--persona", help="Persona (default: EKO_DEFAULT_PERSONA).")
]
ENTRY_ID_HELP = "Entry id, or a unique prefix of it (as `eko cache list` shows)."
UserOpt = Annotated[
    str | None, typer.Option("--user", help="A user's public id: their private scope.")
]


def _persona(services: Services, persona: str | None) -> str:
    chosen = persona or services.settings.default_persona
    if not services.prompts.has_persona(chosen):
        fail(f"unknown persona {chosen!r}", fix=f"one of: {', '.join(services.prompts.personas())}")
    return chosen


def _short(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _entry_table(entries: list[GuardEntry], title: str) -> Table:
    table = Table(title=title)
    # Whole ids, never wrapped or cut: what is printed is what `eko cache show` takes.
    table.add_column("id", no_wrap=True, min_width=32)
    for column in ("status", "scope", "uses", "created", "question"):
        table.add_column(column, justify="right" if column == "uses" else "left")
    for entry in entries:
        table.add_row(
            entry.id,
            entry.status,
            entry.scope,
            str(entry.usage_count),
            entry.created_at.strftime("%Y-%m-%d %H:%M"),
            escape(_short(entry.question)),
        )
    return table


async def _entry_id(services: Services, given: str) -> str:
    """The full id of the entry `given` names (a full id or a unique prefix); exit 1 if none."""
    async with services.database.session() as session:
        return await resolve_id_or_exit(
            session, GuardEntry.id, given, what="cache entry", listing="eko cache list"
        )


async def _get(services: Services, given: str) -> GuardEntry:
    entry = await services.guard.get(await _entry_id(services, given))
    if entry is None:
        fail(f"no cache entry {given!r}", fix="see `eko cache list`")
    return entry


@app.command("list")
def list_command(
    persona: Annotated[
        str | None, typer.Option(help="Only this persona (with private ones).")
    ] = None,
    status: Annotated[str | None, typer.Option(help="active or obsolete.")] = None,
    text: Annotated[str | None, typer.Option("--text", help="Text in question or answer.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 50,
    offset: Annotated[int, typer.Option(min=0)] = 0,
) -> None:
    """List entries, newest first."""
    if status not in (None, "active", "obsolete"):
        fail("--status must be active or obsolete")

    async def go() -> None:
        async with migrated_services() as services:
            entries, total = await services.guard.list_entries(
                persona=persona, status=status, text=text, limit=limit, offset=offset
            )
            counts = await services.guard.count()
        console.print(_entry_table(entries, f"Memory guard entries ({len(entries)} of {total})"))
        console.print(
            f"[dim]active {counts.get('active', 0)} · obsolete {counts.get('obsolete', 0)}[/]"
        )

    run(go())


@app.command("search")
def search_command(
    question: Annotated[str, typer.Argument(help="The question to look up.")],
    persona: PersonaOpt = None,
    user: UserOpt = None,
    threshold: Annotated[
        float | None, typer.Option(help="Try another cosine threshold (default: configured).")
    ] = None,
) -> None:
    """What a question would be served, with every candidate and the false-hit check (nothing is
    served or counted)."""

    async def go() -> None:
        async with migrated_services() as services:
            chosen = _persona(services, persona)
            try:
                scopes = lookup_scopes(chosen, user) if user else [Scope(chosen)]
                result = await services.guard.lookup(
                    question, scopes, record_use=False, threshold=threshold
                )
            except InvalidScope as exc:
                fail(str(exc))
            except EmbeddingError as exc:
                fail(f"the embedder failed: {exc}", fix="check EKO_EMBEDDER and eko doctor")
            embedder = services.guard.embedder_name
        table = Table(title=f"Candidates (threshold {result.threshold:.3f}, embedder {embedder})")
        for column in ("id", "score", "≥ threshold", "check", "question"):
            table.add_column(column)
        if result.decision is not None:
            for judged in result.decision.judged:
                check = judged.check
                verdict = (
                    "-" if check is None else ("ok" if check.passed else ",".join(check.failed))
                )
                table.add_row(
                    judged.candidate.item.id,
                    f"{judged.candidate.score:.4f}",
                    "yes" if judged.above_threshold else "no",
                    verdict,
                    escape(_short(judged.candidate.question)),
                )
        console.print(table)
        hit = result.hit
        if hit is None:
            console.print("no entry would be served: the writer would answer")
        else:
            console.print(
                f"would serve [bold]{hit.entry.id}[/] ({hit.match}, score {hit.score:.4f}):"
            )
            console.print(escape(hit.entry.answer))

    run(go())


@app.command("show")
def show_command(entry_id: Annotated[str, typer.Argument(help=ENTRY_ID_HELP)]) -> None:
    """Show one entry in full."""

    async def go() -> None:
        async with migrated_services() as services:
            entry = await _get(services, entry_id)
        rows: list[tuple[str, Any]] = [
            ("id", entry.id),
            ("status", entry.status),
            ("scope", entry.scope),
            ("key_hash", entry.key_hash),
            ("usage_count", entry.usage_count),
            ("created_at", entry.created_at.isoformat()),
            ("last_used_at", entry.last_used_at.isoformat() if entry.last_used_at else "-"),
            ("source_message_id", entry.source_message_id or "-"),
            ("metadata", entry.meta),
            ("question", entry.question),
            ("answer", entry.answer),
        ]
        for name, value in rows:
            console.print(f"[bold]{name}:[/] {escape(str(value))}")

    run(go())


@app.command("obsolete")
def obsolete_command(entry_id: Annotated[str, typer.Argument(help=ENTRY_ID_HELP)]) -> None:
    """Mark an entry obsolete: never served again, kept for audit until it expires."""

    async def go() -> None:
        async with migrated_services() as services:
            full_id = await _entry_id(services, entry_id)
            entry = await services.guard.mark_obsolete(full_id, reason="staff", by="cli")
        if entry is None:
            fail(f"no cache entry {entry_id!r}", fix="see `eko cache list`")
        console.print(f"entry {full_id} is obsolete")

    run(go())


@app.command("delete")
def delete_command(
    entry_id: Annotated[str, typer.Argument(help=ENTRY_ID_HELP)],
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete an entry and its vector."""

    async def resolve() -> str:
        async with migrated_services() as services:
            return await _entry_id(services, entry_id)

    full_id = run(resolve())
    if not yes and not typer.confirm(f"Delete cache entry {full_id}?"):
        raise typer.Exit(1)

    async def go() -> bool:
        async with migrated_services() as services:
            return await services.guard.delete(full_id)

    if not run(go()):
        fail(f"no cache entry {entry_id!r}", fix="see `eko cache list`")
    console.print(f"entry {full_id} deleted")


@app.command("prune")
def prune_command(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only count.")] = False,
) -> None:
    """Delete entries older than EKO_GUARD_MAX_AGE_DAYS (active or obsolete)."""

    async def go() -> tuple[int, int]:
        async with migrated_services() as services:
            count = await services.guard.prune(dry_run=dry_run)
            return count, services.guard.max_age_days

    count, days = run(go())
    verb = "would delete" if dry_run else "deleted"
    console.print(f"{verb} {count} entries older than {days} days")


@app.command("add")
def add_command(
    question: Annotated[str, typer.Option("--question", "-q", help="The question.")],
    answer: Annotated[str, typer.Option("--answer", "-a", help="The validated answer.")],
    persona: PersonaOpt = None,
    user: UserOpt = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeatable).")] = None,
    phase: Annotated[str | None, typer.Option(help="Project phase (metadata).")] = None,
    project: Annotated[str | None, typer.Option(help="Project (metadata).")] = None,
) -> None:
    """Add a validated question/answer pair (shared by the persona, or private with --user)."""

    async def go() -> GuardEntry:
        async with migrated_services() as services:
            chosen = _persona(services, persona)
            meta = {
                "phase": phase,
                "project": project,
                "authors": ["cli"],
                "initial_score": None,
                "tags": list(tag or []),
                "validated_by": "staff",
            }
            try:
                learned = await services.guard.learn(
                    question=question, answer=answer, scope=Scope(chosen, user), meta=meta
                )
            except InvalidScope as exc:
                fail(str(exc))
            except NotLearnable as exc:
                fail(f"not learnable: {exc.reason}")
            except EmbeddingError as exc:
                fail(f"the embedder failed: {exc}", fix="check EKO_EMBEDDER and eko doctor")
            return learned.entry

    entry = run(go())
    console.print(f"added entry [bold]{entry.id}[/] in scope {entry.scope}")
