"""A cache hit through the API (`eko bench guard --api`): what a person waits for an answer the
memory guard serves, and where that time goes.

A real `eko serve` process (bench/eko_bench/load/eko_server.py) on a fresh database of each
backend, with the configured embedder and default guard settings; its only chat provider is an
address nobody listens on, so a reply that is not a hit shows as a fallback and is counted, never
timed. The first `entries` stored questions of the QQP-format file are learned through
GuardService.learn in-process before the server starts (staff's route does the same, one
at a time). Then, one request at a time, a pro member posts
(`POST /v1/rooms/{id}/messages`, no stream, in a few direct rooms taken in turn):

- exact hits: the stored questions themselves (the exact key answers, read with the recent
  window before any embedding: no embedder call, eko/guard/lookup.py);
- semantic hits: the pairs' other questions (label 1) that the guard serves by cosine + check;
  which ones are hits is found in-process first (below), and only those are posted.

Each kind twice: back to back (the previous reply's after-reply work, which embeds the
exchange for recall, may still be running), then with a pause before each request (what a
person typing their next question meets), on other questions, new to the server's embedder.

Time per request, measured by the client (one loopback connection per request), p50 / p95;
the first `WARM_UP` requests of each kind are left out (first connections, caches). To see
where the time goes, the semantic hits in-process on the same database, before the server
starts: the configured embedder on the question (new to it), then GuardService.lookup once
the vector is ready (the embedder keeps it: exact key, vector search, rows, check, usage
count). What the API adds on top is the message pipeline around the lookup (auth, the user
message stored with its outbox row, the reply stored, events, the after-reply jobs a cached
reply still runs in the same process).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from eko.config import Settings
from eko.embed import Embedder, build_embedder
from eko.guard.scope import Scope, lookup_scopes
from eko.guard.service import GuardService, NotLearnable
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.migrate import upgrade
from eko.store.vectors import build_vector_index
from eko_bench.databases import create_database, drop_database, postgres_server
from eko_bench.guard.pairs import Pair, load_pairs
from eko_bench.load.client import create_direct_room
from eko_bench.load.eko_server import EkoServer, openai_provider
from eko_bench.load.http import request

TARGET_P95_MS = 30.0  # issue 36: a hit is the one reply that can be instant
WARM_UP = 5
ROOMS = 4
TIMEOUT_S = 60.0
# A pause before each post of the last row: a hit still runs after-reply work in the server's
# process (the exchange embedded for recall), which back-to-back posts run into.
PAUSE_S = 1.0
# A provider nobody answers: a hit never calls it, a miss falls back at once.
NOBODY = openai_provider("nobody", "http://127.0.0.1:9/v1", timeout_s=2.0)


@dataclass
class ApiRow:
    backend: str
    kind: str  # what was timed
    times: list[float] = field(default_factory=list)  # seconds
    not_hits: int = 0  # posts that were not served from the cache (not timed)


async def run_api(
    *,
    settings: Settings,
    console: Console,
    data: Path,
    backends: Sequence[str],
    entries: int = 150,
    hits: int = 100,
) -> list[ApiRow]:
    """Measure and print the `--api` table."""
    pairs = [p for p in load_pairs(data) if p.text_a.strip()][:entries]
    rows: list[ApiRow] = []
    name = ""
    for backend in backends:
        console.print(
            f"[dim]{backend}: eko serve, {len(pairs)} entries learned, hits posted…[/dim]"
        )
        # One embedder per backend: it keeps what it embedded, so a second backend's
        # in-process rows would time a look-up in its memo, not the model.
        embedder = build_embedder(settings)
        name = embedder.name
        try:
            rows.extend(await _one_backend(settings, embedder, backend, pairs, hits))
        finally:
            aclose = getattr(embedder, "aclose", None)
            if aclose is not None:
                await aclose()
    console.print(api_table(rows, name))
    return rows


async def _one_backend(
    settings: Settings, embedder: Embedder, backend: str, pairs: Sequence[Pair], hits: int
) -> list[ApiRow]:
    with tempfile.TemporaryDirectory(prefix="eko-bench-guard-api-") as tmp:
        workdir = Path(tmp)
        async with _database_url(backend, workdir) as url:
            # Entries are learned and the hits found in-process, before the server starts
            # (it loads its vector index from the database): one embedding each, no HTTP.
            database = Database(url)
            try:
                await upgrade(database)
                member, public_id = await _member(database)
                guard = GuardService(
                    database=database,
                    vectors=build_vector_index(database, settings),
                    embedder=embedder,
                    auto_prune=False,
                )
                learned = await _learn(guard, Scope(settings.default_persona), pairs)
                scopes = lookup_scopes(settings.default_persona, public_id)
                embed_row = ApiRow(backend, "in-process: embed the question")
                lookup_row = ApiRow(backend, "in-process: GuardService.lookup, once embedded")
                # Twice as many: back to back, then each after a pause (questions new to the
                # server's embedder both times).
                semantic = await _semantic_hits(
                    guard,
                    embedder,
                    scopes,
                    pairs,
                    learned,
                    2 * hits + WARM_UP,
                    embed_row,
                    lookup_row,
                )
            finally:
                await database.dispose()
            async with EkoServer(
                name=f"eko-guard-api-{backend}",
                database_url=url,
                providers=[NOBODY],
                workdir=workdir,
                settings={
                    "EKO_DEFAULT_PERSONA": settings.default_persona,
                    "EKO_EMBEDDER": settings.embedder,
                },
            ) as server:
                rooms = [
                    await create_direct_room(server.url, member, timeout_s=TIMEOUT_S)
                    for _ in range(ROOMS)
                ]
                exact = learned[: hits + WARM_UP]
                exact_row = await _post_all(
                    server.url, member, rooms, exact, ApiRow(backend, "API, exact hit")
                )
                half = (len(semantic) + 1) // 2
                semantic_row = await _post_all(
                    server.url,
                    member,
                    rooms,
                    semantic[:half],
                    ApiRow(backend, "API, semantic hit"),
                )
                # Other stored questions (new to the server's embedder), each posted once the
                # previous reply's after-reply jobs had time to finish.
                paused = learned[hits + WARM_UP : 2 * (hits + WARM_UP)]
                paused_row = await _post_all(
                    server.url,
                    member,
                    rooms,
                    paused,
                    ApiRow(backend, f"API, exact hit, {PAUSE_S:.0f} s after the last reply"),
                    pause_s=PAUSE_S,
                )
                paused_semantic_row = await _post_all(
                    server.url,
                    member,
                    rooms,
                    semantic[half:],
                    ApiRow(backend, f"API, semantic hit, {PAUSE_S:.0f} s after the last reply"),
                    pause_s=PAUSE_S,
                )
    return [embed_row, lookup_row, exact_row, semantic_row, paused_row, paused_semantic_row]


@asynccontextmanager
async def _database_url(backend: str, workdir: Path) -> AsyncIterator[str]:
    """An empty database of this backend (the server migrates it at start)."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{workdir / 'guard-api.db'}"
        return
    async with postgres_server() as server_url:
        url = await create_database(server_url)
        try:
            yield url
        finally:
            await drop_database(server_url, url)


async def _member(database: Database) -> tuple[str, str]:
    """A pro member (never paywalled): their API key and public id."""
    async with database.session() as session:
        member, key = await user_repo.create_user(session, display_name="Asker", is_pro=True)
        return key, member.public_id


async def _learn(guard: GuardService, scope: Scope, pairs: Sequence[Pair]) -> list[str]:
    """Every distinct stored question, as staff would (shared scope); those accepted."""
    learned = []
    for i, question in enumerate(dict.fromkeys(p.text_a for p in pairs)):
        try:
            await guard.learn(question=question, answer=f"Cached answer {i}.", scope=scope)
        except NotLearnable:
            continue
        learned.append(question)
    return learned


async def _semantic_hits(
    guard: GuardService,
    embedder: Embedder,
    scopes: Sequence[Scope],
    pairs: Sequence[Pair],
    learned: Sequence[str],
    limit: int,
    embed_row: ApiRow,
    lookup_row: ApiRow,
) -> list[str]:
    """The asked questions (label 1, stored question learned) the guard serves by cosine,
    timing the embedder and the lookup on each of them."""
    stored = set(learned)
    found: list[str] = []
    await embedder.embed(["warm-up"])
    for pair in pairs:
        if len(found) >= limit + WARM_UP:
            break
        if pair.label != 1 or pair.text_a not in stored or pair.identical:
            continue
        # The embedder keeps what it embedded: embed first (the text is new to it), then
        # the lookup finds the vector ready and times the rest (key, search, rows, check).
        began = time.perf_counter()
        await embedder.embed([pair.text_b], kind="query")
        embedded = time.perf_counter() - began
        began = time.perf_counter()
        result = await guard.lookup(pair.text_b, scopes, record_use=True)
        took = time.perf_counter() - began
        if result.hit is None or result.hit.match != "semantic":
            continue
        found.append(pair.text_b)
        embed_row.times.append(embedded)
        lookup_row.times.append(took)
    return found


async def _post_all(
    base_url: str,
    key: str,
    rooms: Sequence[str],
    questions: Sequence[str],
    row: ApiRow,
    *,
    pause_s: float = 0.0,
) -> ApiRow:
    for i, question in enumerate(questions):
        room = rooms[i % len(rooms)]
        if pause_s:
            await asyncio.sleep(pause_s)
        began = time.perf_counter()
        response = await request(
            base_url,
            "POST",
            f"/v1/rooms/{room}/messages",
            json_body={"content": question},
            headers={"Authorization": f"Bearer {key}"},
            timeout_s=TIMEOUT_S,
        )
        took = time.perf_counter() - began
        if response.status != 201:
            raise RuntimeError(f"POST message: {response.status} {response.body[:300]!r}")
        if response.json()["assistant_message"]["type"] != "cached_response":
            row.not_hits += 1
        elif i >= WARM_UP:
            row.times.append(took)
    return row


def api_table(rows: Sequence[ApiRow], embedder: str) -> Table:
    table = Table(
        title=(
            f"Memory guard: a cache hit through the API (eko serve, embedder {embedder}; "
            f"one request at a time; target p95 <= {TARGET_P95_MS:.0f} ms)"
        )
    )
    for column in ("backend", "timed", "n", "p50", "p95", "max", "not a hit"):
        table.add_column(column, justify="left" if column in ("backend", "timed") else "right")
    for row in rows:
        cells = ["-", "-", "-"]
        if row.times:
            cells = [_ms(statistics.median(row.times)), _ms(p95(row.times)), _ms(max(row.times))]
        table.add_row(row.backend, row.kind, str(len(row.times)), *cells, str(row.not_hits))
    return table


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[round(0.95 * (len(ordered) - 1))]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"
