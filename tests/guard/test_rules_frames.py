"""The verifier's frame rules (eko/guard/rules_frames.py), in English and French: each rule
refuses the look-alike and lets the paraphrase through."""

from __future__ import annotations

import pytest

from eko.guard.check import RULES, false_hit_check
from eko.guard.rules_frames import (
    FRAME_RULES,
    compared,
    edition_added,
    is_definition,
    is_yes_no,
    quantities,
)


@pytest.mark.parametrize(
    ("question", "stored", "rule"),
    [
        # yes/no against a definite kind
        ("Do women cheat?", "When do women cheat?", "yesno"),
        ("Is religion bad for humanity?", "Why is religion bad for humanity?", "yesno"),
        ("Est-ce que les chats dorment beaucoup ?", "Pourquoi les chats dorment-ils ?", "yesno"),
        ("Peut-on visiter le Louvre ?", "Quand peut-on visiter le Louvre ?", "yesno"),
        # the same number, another unit
        ("How can I lose 25 kg?", "How can I lose 25 pounds?", "units"),
        ("Comment perdre 10 kilos ?", "Comment perdre 10 livres ?", "units"),
        ("Is 5km a long run?", "Is 5 miles a long run?", "units"),
        # an edition on one side only
        (
            "What is it like to play Oregon Trail?",
            "What is it like to play Oregon Trail 2?",
            "edition",
        ),
        ("Comment jouer à Zelda ?", "Comment jouer à Zelda 2 ?", "edition"),
        ("Why did World War happen?", "Why did World War II happen?", "edition"),
        # comparisons of other things
        (
            "What is the difference between physics and engineering physics?",
            "What is the difference between mechanical engineering and engineering physics?",
            "compared",
        ),
        (
            "Quelle est la différence entre un crocodile et un alligator ?",
            "Quelle est la différence entre un crocodile et un caïman ?",
            "compared",
        ),
        ("Java vs Kotlin for Android?", "Java vs Scala for Android?", "compared"),
        # a cause against a definition
        ("What causes a cardiac sphincter spasm?", "What is a cardiac sphincter spasm?", "cause"),
        ("Pourquoi la migraine ?", "Qu'est-ce que la migraine ?", "cause"),
    ],
)
def test_frame_rules_refuse_look_alikes(question: str, stored: str, rule: str) -> None:
    result = false_hit_check(question, stored)
    assert rule in result.failed, result
    # Either way round.
    assert rule in false_hit_check(stored, question).failed
    # Off when the rule is not asked for.
    assert rule not in false_hit_check(question, stored, rules=()).failed


@pytest.mark.parametrize(
    ("question", "stored"),
    [
        ("Was Winston Churchill a racist?", "Was Winston Churchill racist?"),
        (
            "Is it possible to meet British people in Ontario?",
            "Where can I meet British people in Ontario?",
        ),
        ("Est-ce que le Louvre est ouvert le lundi ?", "Le Louvre est-il ouvert le lundi ?"),
        ("How can I lose 25 kg?", "How do I lose 25 kilos?"),
        ("Comment perdre 10 kilos ?", "Comment maigrir de 10 kg ?"),
        ("Could Germany have won World War 2?", "How could Germany have won World War II?"),
        ("How do I plan a trip to Goa?", "How should I spend a 3 day trip to Goa?"),
        (
            "What is the difference between distilled water and purified water?",
            "What's the difference between purified water and distilled water?",
        ),
        (
            "What is difference between meditation and sleep?",
            "What is the difference between sleeping and meditation?",
        ),
        (
            "Quelle est la différence entre un crocodile et un alligator ?",
            "Quelle différence entre alligator et crocodile ?",
        ),
        ("What is a proxy server?", "What's a proxy server?"),
        ("Why is the sky blue?", "What makes the sky blue?"),
        ("Qu'est-ce qu'un proxy ?", "C'est quoi un proxy ?"),
    ],
)
def test_frame_rules_let_paraphrases_through(question: str, stored: str) -> None:
    failed = set(false_hit_check(question, stored).failed)
    assert not failed & set(FRAME_RULES), failed


def test_frame_rules_are_part_of_the_check() -> None:
    assert set(FRAME_RULES) <= set(RULES)


def test_helpers() -> None:
    assert is_yes_no("Do women cheat?") and is_yes_no("Est-ce que les chats dorment ?")
    assert not is_yes_no("When do women cheat?") and not is_yes_no("Is there a way to fly?")
    assert quantities("Lose 25kg in 3 weeks") == {"25": "kg", "3": "week"}
    assert quantities("Perdre 10 kilos") == {"10": "kg"}
    assert edition_added("Play Oregon Trail", "Play Oregon Trail 2") == ("trail", "2")
    assert edition_added("Play Oregon Trail 2", "Play Oregon Trail 2 again") is None
    assert compared("Difference between a cat and a dog?") == frozenset({"cat", "dog"})
    assert compared("How do I learn Python?") is None
    assert is_definition("What is a cardiac sphincter spasm?")
    assert not is_definition("What is the best way to lose weight?")
