"""`eko bench language`: dialogs posted through the API with a scripted model, each reply
scored by its language and for echoes; bad files refused; the CLI's errors."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from eko.cli import app
from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko_bench.bench_language import run
from eko_bench.data_errors import BenchDataError
from eko_bench.reply_language import (
    DEFAULT_DIALOGS_FILE,
    echoes,
    first_language_baseline,
    load_dialogs,
    select_split,
)

ROUTE = (
    '{"confidence": 0.9, "decision": "route", "notes": "", "payload": {"intent": '
    '"general_question", "context_level": "light", "need_web": false, "web_search_prompt": "", '
    '"scope_need": false, "scopes_selected": []}}'
)


def _dialogs(path: Path) -> Path:
    rows = [
        {
            "id": "d1",
            "turns": [
                {"text": "Ma soeur Léa joue du violon tous les soirs.", "lang": "fr"},
                {"text": "What instruments does my sister play?", "lang": "en"},
            ],
        },
        {
            "id": "d2",
            "turns": [{"text": "I just adopted a cat named Miso.", "lang": "en"}],
        },
    ]
    path.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    return path


async def test_replies_are_scored_by_language_and_echo(tmp_path: Path) -> None:
    def model(request: ProviderRequest) -> str:
        if request.json_schema is not None:
            return ROUTE
        if request.priority != "interactive":
            return "{}"
        last = request.messages[-1].content
        # Echoes the French message back; answers the others in English.
        if "violon" in last:
            return "Ma soeur Léa joue du violon tous les soirs."
        return "She plays the violin, and it sounds like a lovely habit."

    output = io.StringIO()
    results = await run(
        settings=Settings(_env_file=None),
        console=Console(file=output, width=250),
        data=_dialogs(tmp_path / "dialogs.jsonl"),
        split="all",
        providers=[FunctionModel(model)],
        embedder=HashEmbedder(),
    )
    (result,) = results
    scored = [(r.dialog, r.turn, r.expected, r.language, r.echo) for r in result.replies]
    assert scored == [
        ("d1", 1, "fr", "fr", True),
        ("d1", 2, "en", "en", False),
        ("d2", 1, "en", "en", False),
    ]
    assert [r.switched for r in result.replies] == [False, True, False]
    table = output.getvalue()
    # The model's row, then the first-language baseline's: 2 of 3 right, the switch missed.
    assert "3/3 (100%)" in table and "2/3 (67%)" in table and "0/1 (0%)" in table
    assert "1/3 (33%)" in table  # one echo


async def test_compare_hint_runs_again_without_the_language_line(tmp_path: Path) -> None:
    systems: list[str] = []

    def model(request: ProviderRequest) -> str:
        if request.json_schema is not None:
            return ROUTE
        system = request.messages[0].content
        if "How you answer" in system:  # the writer's call, not the memory's phrases
            systems.append(system)
        return "Sure, happy to help with that."

    results = await run(
        settings=Settings(_env_file=None),
        console=Console(file=io.StringIO(), width=250),
        data=_dialogs(tmp_path / "dialogs.jsonl"),
        split="all",
        limit=1,
        compare_hint=True,
        providers=[FunctionModel(model)],
        embedder=HashEmbedder(),
    )
    assert [r.label for r in results] == [
        "reply_language stated (default)",
        "reply_language not stated",
    ]
    stated = ["reply_language:" in system for system in systems]
    assert stated == [True, True, False, False]
    # Always English: the French first message is wrong, the English switch right.
    assert [r.right for r in results[0].replies] == [False, True]


def test_the_packaged_dialogs_split_in_two_halves() -> None:
    dialogs = load_dialogs(DEFAULT_DIALOGS_FILE)
    dev, test = select_split(dialogs, "dev"), select_split(dialogs, "test")
    assert dev and test and len(dev) + len(test) == len(dialogs)
    assert not {d.id for d in dev} & {d.id for d in test}
    # Most dialogs switch language: the baseline that keeps the first one must miss some.
    assert not all(all(first_language_baseline(d)) for d in test)


def test_echo_needs_a_whole_sentence_of_four_words() -> None:
    said = ["Ma soeur Léa peint des aquarelles. Elle chante bien."]
    # Case, accents and punctuation aside, the user's sentence is there.
    assert echoes("Je sais : ma SOEUR lea peint des aquarelles !", said) is True
    assert echoes("Ta soeur Léa peint des aquarelles.", said) is False  # a word changed
    assert echoes("Elle chante bien, oui.", said) is False  # a sentence of three words
    assert echoes("Elle peint.", said) is False


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "x", "turns": [{"text": "Hi", "lang": "de"}]}', "lang must be 'fr' or 'en'"),
        ('{"id": "x", "turns": [{"text": " ", "lang": "en"}]}', "non-empty text"),
        ('{"id": "x"}', "not a dialog line"),
        ('{"id": "x", "turns": []}', "x has no turn"),
        ("{oops", "not JSON"),
    ],
)
def test_bad_dialog_lines_are_named(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "dialogs.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(BenchDataError, match=rf"dialogs\.jsonl:1: .*{message}"):
        load_dialogs(path)


def test_the_cli_refuses_a_bad_file_and_a_bad_split(tmp_path: Path) -> None:
    bad = tmp_path / "dialogs.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(app, ["bench", "language", "--data", str(bad)])
    assert result.exit_code != 0
    assert "bad data file" in result.output and "dialogs.jsonl:1" in result.output
    result = runner.invoke(app, ["bench", "language", "--split", "half"])
    assert result.exit_code != 0 and "unknown split 'half'" in result.output
