"""Reading the user's answer to the intro's target key."""

from __future__ import annotations

from typing import Any

import pytest

from eko.chat.engine.intro import parse_intro_answer


@pytest.mark.parametrize(
    ("key", "text", "value"),
    [
        ("first_name", "Marie", "Marie"),
        ("first_name", "je m'appelle marie-claire", "Marie-Claire"),
        ("first_name", "Salut ! Moi c'est Paul.", "Paul"),
        ("first_name", "My name is Ana", "Ana"),
        ("use_tu_form", "oui, on peut se tutoyer", True),
        ("use_tu_form", "Tu", True),
        ("use_tu_form", "Je préfère le vouvoiement", False),
        ("use_tu_form", "non", False),
        ("main_city", "J'habite à Saint-Étienne", "Saint-Étienne"),
        ("main_city", "lyon", "Lyon"),
        ("main_city", "I live in New York", "New York"),
        ("main_activity", "Je suis architecte d'intérieur", "architecte d'intérieur"),
        ("main_activity", "I work as a nurse", "nurse"),
    ],
)
def test_answers_become_values(key: str, text: str, value: Any) -> None:
    answer = parse_intro_answer(key, text)
    assert answer is not None and answer.value == value
    assert answer.value_type == ("boolean" if isinstance(value, bool) else "string")


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("first_name", "Tu peux m'aider à écrire un mail ?"),
        ("first_name", "ok"),
        ("first_name", "je ne sais pas trop quoi te dire là tout de suite"),
        ("first_name", "123"),
        ("main_city", "Pourquoi tu demandes ?"),
        ("main_city", "je vis un peu partout en ce moment vraiment"),
        ("use_tu_form", "bof"),
        ("main_activity", "merci"),
    ],
)
def test_non_answers_are_ignored(key: str, text: str) -> None:
    assert parse_intro_answer(key, text) is None
