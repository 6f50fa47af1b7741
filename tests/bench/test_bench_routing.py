"""`eko bench routing`: rules, the model and two baselines on the same probes, per split."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from eko.config import Settings
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko_bench.bench_routing import run
from eko_bench.data_errors import BenchDataError

PROBES: list[dict[str, object]] = [
    {"message": "Merci beaucoup, bonne soirée !", "intents": ["amabilities"]},
    {"message": "Quelle est la capitale du Pérou ?", "intents": ["general_question"]},
    {"message": "Réserve-moi un taxi pour 8 h.", "intents": ["action_request"]},
]


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows), "utf-8")
    return path


async def test_each_router_is_scored_on_the_same_probes(tmp_path: Path) -> None:
    asked: list[ProviderRequest] = []

    def model(request: ProviderRequest) -> str:
        asked.append(request)
        return '{"intent": "general_question", "context_level": "light"}'

    output = io.StringIO()
    rows = await run(
        settings=Settings(_env_file=None),
        console=Console(file=output, width=200),
        data=write(tmp_path / "probes.jsonl", PROBES),
        provider=FunctionModel(model),
    )
    test = {row.router: row for row in rows if row.split == "test"}
    assert test["rules"].right == 3
    assert test["always general_question"].right == 1
    # The model routed everything to general_question: one right, asked once per probe, with
    # the orchestrator's compact contract.
    assert test["model (compact contract)"].right == 1
    assert sum(r.json_schema is not None for r in asked) == len(asked) > len(PROBES)
    assert 0 < test["random intent"].right < 3
    assert "3/3 (100%)" in output.getvalue()


async def test_a_file_that_is_not_routing_probes_is_a_data_error(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.jsonl", [{"message": "Salut", "intents": ["chitchat"]}])
    with pytest.raises(BenchDataError, match="intents must be among"):
        await run(
            settings=Settings(_env_file=None),
            console=Console(file=io.StringIO()),
            data=bad,
            model=False,
        )
