"""The verb's time and mood (eko/guard/rules_mood.py): a past fact, a prediction, an opinion
and a wish are different answers; moods that share an answer pass."""

from __future__ import annotations

import pytest

from eko.guard.check import false_hit_check
from eko.guard.rules_mood import mood, moods_differ


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Did Tesla open a factory in Chile?", "past"),
        ("How long has the Louvre existed?", "past"),
        ("Will Tesla open a factory in Chile?", "future"),
        ("Is Tesla going to open a factory in Chile?", "future"),
        ("Should Chile tax Tesla?", "advice"),
        ("Shall I call him back?", "advice"),
        ("Would you eat insects?", "wish"),
        ("Does Chile tax Tesla?", "present"),
        ("Why Tesla left Chile?", None),
        ("Tesla a-t-elle ouvert une usine au Chili ?", "past"),
        ("Le peso s'est-il effondré ?", "past"),
        ("Tesla va-t-elle ouvrir une usine au Chili ?", "future"),
        ("Le Chili sera-t-il champion ?", "future"),
        ("Le Chili devrait-il taxer Tesla ?", "advice"),
        ("Mangerais-tu des insectes ?", "wish"),
        ("Le Chili taxe-t-il Tesla ?", "present"),
        # "a" for "à" before a name is no compound past.
        ("Quel temps fait-il a Paris ?", None),
    ],
)
def test_the_mood_is_read_from_the_main_verb(text: str, expected: str | None) -> None:
    assert mood(text) == expected


@pytest.mark.parametrize(
    ("question", "stored"),
    [
        ("Did Tesla open a factory in Chile?", "Will Tesla open a factory in Chile?"),
        ("Does Chile tax Tesla?", "Should Chile tax Tesla?"),
        ("Have you ever eaten insects?", "Would you ever eat insects?"),
        ("Is Tesla going to leave Chile?", "Should Tesla leave Chile?"),
        ("Tesla a-t-elle quitté le Chili ?", "Tesla va-t-elle quitter le Chili ?"),
        ("Le Chili taxe-t-il Tesla ?", "Le Chili doit-il taxer Tesla ?"),
        ("As-tu déjà mangé des insectes ?", "Mangerais-tu des insectes ?"),
    ],
)
def test_a_fact_a_prediction_an_opinion_and_a_wish_are_not_served_for_each_other(
    question: str, stored: str
) -> None:
    for asked, kept in ((question, stored), (stored, question)):
        result = false_hit_check(asked, kept)
        assert not result.passed
        assert "mood" in result.failed


@pytest.mark.parametrize(
    ("question", "stored"),
    [
        # Present and future, present and past, a wish and the present share answers.
        ("What happens if the Moon disappears?", "What will happen if the Moon disappears?"),
        ("How did you lose weight?", "How do I lose weight?"),
        (
            "Would it be possible to learn Rust in a month?",
            "Is it possible to learn Rust in a month?",
        ),
        # Advice about the asker, an impersonal fact, an opinion asked.
        ("Should I learn Rust?", "Do I need to learn Rust?"),
        ("Should I buy a Tesla?", "Is it worth buying a Tesla?"),
        ("What do you think of Tesla's new car?", "Should Tesla sell its new car?"),
        ("How long should you steep green tea?", "How long do you steep green tea?"),
        ("What should be done to stop procrastinating?", "How can someone stop procrastinating?"),
        ("How much water is best for a runner?", "How much water should runners drink?"),
        # Ability passes with advice; a leading condition is not the main clause.
        ("Should men wear earrings?", "Can men wear earrings?"),
        (
            "What would you change first if you were made mayor of Paris?",
            "If you were mayor of Paris, what is the first thing you would change?",
        ),
        ("Devrais-je apprendre le Rust ?", "Dois-je apprendre le Rust ?"),
        ("Si tu étais maire, que changerais-tu ?", "Que changerais-tu si tu devenais maire ?"),
        ("Va-t-il neiger à Lyon ?", "Est-ce qu'il va neiger à Lyon ?"),
    ],
)
def test_moods_that_share_an_answer_pass(question: str, stored: str) -> None:
    assert moods_differ(question, stored) is None
    assert moods_differ(stored, question) is None
