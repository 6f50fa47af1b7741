"""The answer-quality set and scorer behind `eko bench llm`, and its JSON probe judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eko_bench.llm_quality import (
    QAItem,
    is_right,
    load_questions,
    most_frequent_expected_word,
    normalise,
    score,
)
from eko_bench.llm_quality_json import (
    PROBES,
    judge,
    orchestrator_messages,
    orchestrator_output_model,
)


def item(*accept: str) -> QAItem:
    return QAItem(id="q", lang="fr", question="?", accept=accept)


def test_the_packaged_set_is_at_least_forty_questions_half_french_half_english() -> None:
    items = load_questions()
    assert len(items) >= 40
    assert sum(i.lang == "fr" for i in items) == sum(i.lang == "en" for i in items)
    assert len({i.id for i in items}) == len(items)


def test_no_question_gives_its_own_answer_away() -> None:
    # An answer that merely repeats the question must not score.
    for question in load_questions():
        assert not is_right(question.question, question), question.id


def test_matching_ignores_case_accents_punctuation_and_digit_groups() -> None:
    assert normalise("À 17:00, Saint-Exupéry a écrit 1 000 pages.") == (
        "a 17 00 saint exupery a ecrit 1000 pages"
    )
    assert is_right("C'est SAINT EXUPERY.", item("Saint-Exupéry"))
    assert is_right("Il y a 1 000 grammes.", item("1000", "mille"))
    assert is_right("Mille grammes.", item("1000", "mille"))


def test_matching_is_by_whole_words() -> None:
    assert not is_right("Un catalogue.", item("cat"))
    assert not is_right("3910", item("391"))
    assert is_right("The answer is 391.", item("391"))


def test_scores_and_the_constant_baseline() -> None:
    items = [item("Canberra"), item("100", "cent"), item("cent")]
    assert most_frequent_expected_word(items) == "cent"
    assert score(["cent"] * 3, items) == 2
    assert score([""] * 3, items) == 0


def test_a_malformed_line_is_reported_with_its_number(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text(
        json.dumps({"id": "a", "lang": "en", "question": "?", "accept": ["x"]}) + "\n{oops}\n"
    )
    with pytest.raises(ValueError, match=r"qa\.jsonl:2"):
        load_questions(path)


def test_json_probes_use_the_orchestrators_prompt_and_output_model() -> None:
    output = orchestrator_output_model()
    system, user = orchestrator_messages(PROBES[3])
    assert "You are the orchestrator" in system.content
    assert "{{" not in system.content  # every placeholder filled
    assert "Message to route:\nMerci beaucoup" in user.content
    assert "Eko: Bien sûr" in user.content

    good = {
        "confidence": 0.9,
        "decision": "thanks",
        "notes": "polite closing",
        "payload": {
            "intent": "amabilities",
            "context_level": "light",
            "need_web": False,
            "web_search_prompt": "",
            "scope_need": False,
            "scopes_selected": [],
        },
    }
    assert judge(json.dumps(good), PROBES[3], output).valid
    assert judge(json.dumps(good), PROBES[3], output).intent_ok
    assert not judge(json.dumps(good), PROBES[1], output).intent_ok
    bad = judge('{"confidence": 2}', PROBES[3], output)
    assert not bad.valid and bad.error


def test_json_probes_render_the_compact_contract_as_the_orchestrator_does() -> None:
    output = orchestrator_output_model("compact")
    system, user = orchestrator_messages(PROBES[3], contract="compact")
    assert "You route the last message" in system.content and "{{" not in system.content
    assert "Nodes the backend may run" not in system.content
    assert "Message to route:\nMerci beaucoup" in user.content
    good = json.dumps({"intent": "amabilities", "context_level": "light"})
    assert judge(good, PROBES[3], output).intent_ok
    assert not judge(good, PROBES[1], output).intent_ok
    # The full contract's answer is not a compact answer.
    assert not judge('{"confidence": 0.9, "payload": {}}', PROBES[3], output).valid
