"""EKO_BENCH_REAL_SUMMARIES=N: time N real L1 summaries of LoCoMo with the configured model."""

from __future__ import annotations

import os
import time
from pathlib import Path

from rich.console import Console

from eko.bench.context.data import load_locomo
from eko.config import Settings
from eko.embed import build_embedder
from eko.llm.providers import build_providers
from eko.llm.runtime import LLMRuntime
from eko.memory.service import build_memory
from eko.prompts.library import PromptLibrary
from eko.store import messages as message_repo
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.llm_calls import DatabaseCallRecorder
from eko.store.migrate import upgrade
from eko.store.vectors import build_vector_index


async def time_real_summaries(
    settings: Settings, data: Path, workdir: Path, console: Console
) -> str:
    """EKO_BENCH_REAL_SUMMARIES=N: time N real L1 summaries of LoCoMo with the configured model."""
    count = int(os.environ.get("EKO_BENCH_REAL_SUMMARIES", "0") or 0)
    if count <= 0:
        return ""
    conv = load_locomo(data)[0]
    database = Database(f"sqlite+aiosqlite:///{workdir / 'real.db'}")
    await upgrade(database)
    providers = build_providers(settings)
    runtime = LLMRuntime(providers, DatabaseCallRecorder(database))
    memory = build_memory(
        settings=settings.model_copy(update={"database_url": database.url}),
        database=database,
        runtime=runtime,
        embedder=build_embedder(settings),
        vectors=build_vector_index(database, settings),
        prompts=PromptLibrary(),
    )
    async with database.session() as session:
        user, _ = await user_repo.create_user(session, display_name=conv.speakers[0])
        room = await room_repo.create_room(
            session, kind="lobby", name="real", persona="eko", created_by=user.id
        )
    for index, turn in enumerate(t for _, turns in conv.sessions for t in turns):
        await message_repo.append_message(
            database,
            room_id=room.id,
            role="user",
            content=turn["text"],
            sender_id=user.id,
            dedupe_key=f"real:{index}",
        )
    console.print(f"timing {count} real summary calls…")
    started = time.perf_counter()
    result = await memory.summaries.catch_up(room.id, max_new=count)
    elapsed = time.perf_counter() - started
    for provider in providers:
        await provider.aclose()
    await database.dispose()
    made = len(result.created)
    return (
        f"real model: {made} L1 summaries in {elapsed:.0f} s "
        f"({elapsed / max(made, 1):.0f} s each; stopped: {result.stopped})"
    )
