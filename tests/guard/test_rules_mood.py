"""The verb's time and mood (eko/guard/rules_mood.py): a past fact, a prediction, an opinion
and a wish are different answers; moods that share an answer pass."""

from __future__ import annotations

import pytest

from eko.guard.check import false_hit_check
from eko.guard.rules_mood import manner_against_fact, mood, moods_differ


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
        # "has" without a participle is a possession, not a perfect.
        ("Which has more range, Tesla or Rivian?", None),
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


@pytest.mark.parametrize(
    ("manner", "fact"),
    [
        ("How does reflexology work?", "Does reflexology work?"),
        ("How is tourism changing Venice?", "Is tourism changing Venice?"),
        ("How do owls see at night?", "Do owls see at night?"),
        ("Comment fonctionne la réflexologie ?", "La réflexologie fonctionne-t-elle ?"),
        ("Comment le tourisme change-t-il Venise ?", "Est-ce que le tourisme change Venise ?"),
    ],
)
def test_a_manner_is_not_served_for_a_yes_no_fact(manner: str, fact: str) -> None:
    assert manner_against_fact(manner, fact) == (["how"], ["yes/no"])
    assert manner_against_fact(fact, manner) == (["yes/no"], ["how"])
    assert "yesno" in false_hit_check(fact, manner).failed


@pytest.mark.parametrize(
    ("manner", "other"),
    [
        # Ability, a prediction, a way asked for, how one knows, a comparison.
        ("How can I learn the violin alone?", "Can I learn the violin alone?"),
        ("How can green tea help me lose weight?", "Does green tea help me lose weight?"),
        ("How will robots change farming?", "Will robots change farming?"),
        ("How do I fix a leaking tap?", "Is there a way to fix a leaking tap?"),
        (
            "Comment réparer un robinet qui fuit ?",
            "Y a-t-il un moyen de réparer un robinet qui fuit ?",
        ),
        ("How do I know if I have the flu?", "Do I have the flu?"),
        (
            "How are baking soda and baking powder different?",
            "Is baking soda the same as baking powder?",
        ),
        ("How do antibiotics work?", "Do antibiotics work on viruses? If so, how?"),
    ],
)
def test_a_manner_passes_with_what_asks_the_same(manner: str, other: str) -> None:
    assert manner_against_fact(manner, other) is None
    assert manner_against_fact(other, manner) is None
