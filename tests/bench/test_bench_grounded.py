"""`eko bench grounded`: questions about the user's life asked through the API with a scripted
model that always claims to know; the grounded pipeline's check vs today's pipeline, the
packaged set's shape, and bad files refused."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko_bench.bench_grounded import run
from eko_bench.data_errors import BenchDataError
from eko_bench.grounded_data import (
    DEFAULT_QUESTIONS_FILE,
    answers,
    does_not_know,
    load_questions,
    select,
)

ROUTE = (
    '{"confidence": 0.9, "decision": "route", "notes": "", "payload": {"intent": '
    '"general_question", "context_level": "light", "need_web": false, "web_search_prompt": "", '
    '"scope_need": false, "scopes_selected": []}}'
)


def _questions(path: Path) -> Path:
    rows = [
        {
            "id": "u1",
            "lang": "en",
            "split": "test",
            "kind": "unstated",
            "history": [],
            "question": "What instruments does my sister play?",
            "expected": [],
        },
        {
            "id": "s1",
            "lang": "en",
            "split": "test",
            "kind": "stated",
            "history": [
                {"role": "user", "content": "My sister Emma plays the cello."},
                {"role": "assistant", "content": "Nice!"},
            ],
            "question": "What instruments does my sister play?",
            "expected": ["cello"],
        },
    ]
    path.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    return path


async def test_the_check_turns_inventions_into_dont_know(tmp_path: Path) -> None:
    def model(request: ProviderRequest) -> str:
        if request.json_schema is not None:
            return ROUTE
        if request.priority != "interactive":
            return "{}"
        said = " ".join(str(m.content) for m in request.messages[1:])
        return "She plays the cello." if "cello" in said else "She plays the piano."

    output = io.StringIO()
    results = await run(
        settings=Settings(_env_file=None),
        console=Console(file=output, width=250),
        data=_questions(tmp_path / "questions.jsonl"),
        split="test",
        providers=[FunctionModel(model)],
        embedder=HashEmbedder(),
    )
    grounded, today = results
    assert [(r.question.id, r.invented, r.right, r.corrected) for r in grounded.replies] == [
        ("u1", False, False, True),
        ("s1", False, True, False),
    ]
    assert [(r.question.id, r.invented, r.right, r.corrected) for r in today.replies] == [
        ("u1", True, False, False),
        ("s1", False, True, False),
    ]
    table = output.getvalue()
    assert "always 'I don't know'" in table and "today: no note, no check" in table


def test_the_packaged_set_has_both_languages_kinds_and_splits() -> None:
    questions = load_questions(DEFAULT_QUESTIONS_FILE)
    for lang in ("en", "fr"):
        unstated = [q for q in questions if q.lang == lang and q.kind == "unstated"]
        stated = [q for q in questions if q.lang == lang and q.kind == "stated"]
        assert len(unstated) >= 20 and len(stated) >= 5
        assert {q.split for q in unstated} == {"dev", "test"} == {q.split for q in stated}
    test = select(questions, "test", None)
    assert test and all(q.split == "test" for q in test)
    limited = select(questions, "all", 2)
    assert len(limited) == 8  # 2 per language and kind


def test_scoring_words() -> None:
    (stated,) = [q for q in load_questions(DEFAULT_QUESTIONS_FILE) if q.id == "en-stated-05"]
    assert answers("You're allergic to peanuts.", stated)
    assert not answers("You're allergic to cats.", stated)
    assert does_not_know("I don't know, you never told me.")
    assert does_not_know("Je ne sais pas : tu ne me l'as pas dit.")
    assert does_not_know("Which ones?")
    assert not does_not_know("She plays the piano. Anything else?")


def test_a_bad_line_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    row = {"id": "x", "lang": "en", "split": "test", "kind": "guess", "question": "Who?"}
    path.write_text(json.dumps(row), encoding="utf-8")
    with pytest.raises(BenchDataError, match="kind must be"):
        load_questions(path)
    row = {"id": "x", "lang": "en", "split": "test", "kind": "stated", "question": "Who?"}
    path.write_text(json.dumps(row), encoding="utf-8")
    with pytest.raises(BenchDataError, match="history and expected"):
        load_questions(path)
