"""`eko bench extract`: the product's extraction call and three baselines, scored by content."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from eko.config import Settings
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko_bench.bench_extract import run
from eko_bench.cli import app
from eko_bench.data_errors import BenchDataError
from eko_bench.extraction_data import Label, item_matches

CELLO: dict[str, object] = {
    "id": "t-1",
    "lang": "fr",
    "user_name": "Camille",
    "previous": "",
    "user": "Ma sœur Léa joue du violoncelle depuis dix ans.",
    "reply": "Super ! Essaie « Le Cygne » de Saint-Saëns en duo.",
    "expected": [{"kind": "fact", "about": "Léa", "words": [["lea", "soeur"], ["violoncell"]]}],
    "acceptable": [],
}
CAPITAL: dict[str, object] = {
    "id": "t-2",
    "lang": "en",
    "user_name": "Tom",
    "previous": "",
    "user": "What is the capital of Australia?",
    "reply": "Canberra.",
    "expected": [],
    "acceptable": [],
}


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows), "utf-8")
    return path


def item(subject: str, content: str) -> dict[str, object]:
    return {"kind": "fact", "subject": subject, "content": content, "confidence": 0.9}


def test_a_label_matches_every_word_group_at_the_start_of_a_word() -> None:
    label = Label("fact", "Léa", (("lea", "soeur"), ("violoncell",)))
    assert item_matches(label, "Léa", "Elle joue du Violoncelle.")
    assert not item_matches(label, "Léa", "Elle joue du violon.")  # the wrong instrument
    assert not item_matches(label, "Paul", "Paul joue du violoncelle.")  # the wrong person
    cell = Label("fact", "x", (("cell",),))
    assert not item_matches(cell, "Léa", "Elle joue du violoncelle")  # not a word's start
    assert item_matches(cell, "Léa", "She plays the cello")
    assert item_matches(Label("fact", "x", (("the vert",),)), "x", "Du thé vert")  # phrases


async def test_the_model_and_baselines_are_scored_on_the_same_exchanges(tmp_path: Path) -> None:
    asked: list[ProviderRequest] = []

    def model(request: ProviderRequest) -> str:
        asked.append(request)
        exchange = request.messages[-1].content
        if "violoncelle" in exchange:
            items = [
                item("Léa", "La sœur de Camille, Léa, joue du violoncelle."),
                item("Saint-Saëns", "Le Cygne de Saint-Saëns se joue en duo."),  # filtered
            ]
        else:
            items = [item("Australie", "La capitale de l'Australie est Canberra.")]  # filtered
        return json.dumps({"items": items, "answered_goals": []})

    output = io.StringIO()
    rows = await run(
        settings=Settings(_env_file=None),
        console=Console(file=output, width=220),
        data=write(tmp_path / "exchanges.jsonl", [CELLO, CAPITAL]),
        providers=[FunctionModel(model)],
    )
    by_label = {row.label: row for row in rows}
    eko = by_label["Eko's extraction, configured model"]
    assert (eko.right, eko.found, eko.stored_on_nothing) == ([True], [True], 0)
    assert len(asked) == 2 and all(r.json_schema is not None for r in asked)
    # The same calls before the filter: the reply's suggestion and the world fact were proposed.
    proposed = by_label["  the same calls, before the filter"]
    assert (proposed.right, proposed.stored_on_nothing) == ([True, False, False], 1)
    assert "Ma sœur Léa joue du violoncelle" in asked[0].messages[-1].content
    message = by_label["baseline: store the user's message"]
    assert (message.right, message.found, message.stored_on_nothing) == ([True, False], [True], 1)
    assert by_label["baseline: store nothing"].found == [False]
    assert "1/1 (100%)" in output.getvalue()


async def test_a_failed_call_stores_nothing_and_is_counted(tmp_path: Path) -> None:
    rows = await run(
        settings=Settings(_env_file=None),
        console=Console(file=io.StringIO()),
        data=write(tmp_path / "exchanges.jsonl", [CELLO]),
        providers=[FunctionModel(lambda request: "not json at all")],
    )
    eko = rows[-2]
    assert (eko.failed, eko.right, eko.found) == (1, [], [False])


async def test_a_file_that_is_not_labelled_exchanges_is_a_data_error(tmp_path: Path) -> None:
    bad = dict(CELLO, expected=[{"kind": "opinion", "words": [["x"]]}])
    with pytest.raises(BenchDataError, match="kind must be one of"):
        await run(
            settings=Settings(_env_file=None),
            console=Console(file=io.StringIO()),
            data=write(tmp_path / "bad.jsonl", [bad]),
            providers=[FunctionModel.constant("{}")],
        )


def test_the_cli_refuses_a_bad_file_with_a_message(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.jsonl", [{"id": "x"}])
    result = CliRunner().invoke(app, ["extract", "--data", str(bad)])
    assert result.exit_code != 0
    assert "bad data file" in result.output and "missing field" in result.output
