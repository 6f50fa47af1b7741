"""The chain end to end on a bundled local model (no native tool calling: the text format).

Every stage is the same small model (allowed, and it must still stop): its calls to the
workspace and memory tools are parsed from its text, run, and the chain returns a reply within
the budgets. What the model says is not judged; the path and the bounds are.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eko.chain.build import build_chain
from eko.chain.tools import ToolContext
from eko.config import Settings
from eko.llm.providers import build_providers
from eko.llm.runtime import LLMRuntime
from eko.memory.items import NewItem
from eko.memory.scopes import write_key
from eko.prompts.library import PromptLibrary
from eko.store.db import Database
from tests.memory.conftest import make_kit

pytestmark = pytest.mark.slow

SMALL_MODEL = "qwen2.5-coder-0.5b-instruct-q4_k_m"


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
async def test_the_chain_runs_on_the_bundled_model(database: Database, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("The launch is on Friday.\n", encoding="utf-8")
    kit = make_kit(database)
    user = await kit.user("Camille")
    room = await kit.room(user)
    await kit.memory.items.remember(
        NewItem(kind="fact", subject="budget", content="The launch budget is 300 euros"),
        scope=write_key(room, user),
    )
    settings = Settings(
        database_url=database.url,
        local_model=SMALL_MODEL,
        llm_temperature=0,
        chain_workspace=workspace,
        chain_max_tokens=40,
        chain_stage_timeout_s=300,
        _env_file=None,
    )
    providers = build_providers(settings)
    runner = build_chain(
        settings=settings,
        runtime=LLMRuntime(providers),
        prompts=PromptLibrary(),
        memory=kit.memory,
    )
    try:
        result = await runner.run(
            "Read notes.txt and search my memories for the budget: when is the launch, "
            "and what is its budget?",
            ToolContext(user=user, room=room, message_id=None),
        )
    finally:
        for provider in providers:
            await provider.aclose()
    turns = [stage.turns for stage in result.stages]
    assert all(t <= b for t, b in zip(turns, (4, 3, 2), strict=True)), turns
    assert result.turns <= 8
    assert all(stage.ran for stage in result.stages)
    assert any(stage.stop_reason is not None for stage in result.stages)
    called = {tool.name for stage in result.stages for tool in stage.tools_used if tool.ok}
    assert called, result.to_meta()
    assert result.reply, result.to_meta()
