"""A manner against a when / who or a definition, opposites the list lacked, a forward reference
to text not given (issue 36: the families of the truly wrong serves left on unseen pairs).

The traps are the dev families of the bench (bench/eko_bench/data/guard_families.jsonl), on
which the rules were chosen; the check before these rules served most of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eko.guard.check import false_hit_check
from eko.guard.rules import is_deictic
from eko.guard.rules_manner import asks_definition, asks_manner, opening_kind
from eko.guard.rules_words import kinds_differ, opposites

DEV = Path(__file__).parents[2] / "bench" / "eko_bench" / "data" / "guard_families.jsonl"
FAMILIES = ("manner_definite", "manner_definition", "opposites_more", "deictic_forward")


def _traps(family: str, lang: str) -> list[tuple[str, str]]:
    rows = (json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines())
    return [
        (row["text_a"], row["text_b"])
        for row in rows
        if row["family"] == family and row["lang"] == lang and row["label"] == 0
    ]


def _served(a: str, b: str) -> bool:
    """Served as the guard would: neither side deictic and the check passes."""
    return not is_deictic(a) and not is_deictic(b) and false_hit_check(a, b).passed


@pytest.mark.parametrize("lang", ["en", "fr"])
@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_has_ten_traps_none_served(family: str, lang: str) -> None:
    pairs = _traps(family, lang)
    assert len(pairs) >= 10
    served = [(a, b) for a, b in pairs if _served(a, b) or _served(b, a)]
    assert served == []


# The same question: these passed before the rules and must still pass.
PARAPHRASES = [
    ("When is the best time to plant tulip bulbs?", "What is the best time to plant tulip bulbs?"),
    ("How do I prune a rose bush?", "What is the right way to prune a rose bush?"),
    ("How will you know you love someone?", "When do you know that you are in love?"),
    ("How do I know when bread is done?", "When do I know bread is done?"),
    ("Where can I find a tutor?", "How can I find a tutor?"),
    ("How do I make sourdough?", "What is the best way to make sourdough?"),
    ("How do I start a blog?", "What are the steps to start a blog?"),
    ("What is a VPN and how does it work?", "How does a VPN work and what is it?"),
    ("What are the steps to make cheese?", "How do I make cheese?"),
    (
        "Is distilled water the same as purified water?",
        "Are distilled and purified water different?",
    ),
    ("Is it legal to fly a drone in parks?", "Is flying a drone in parks legal?"),
    ("Why is my laptop slow?", "Why is my laptop so slow?"),
    (
        "Which of the following is a mammal: a whale or a shark?",
        "Which of the following is a mammal, a whale or a shark?",
    ),
    (
        "How many people live below the poverty line in India?",
        "How many people in India live below the poverty line?",
    ),
    ("Quand planter des tulipes ?", "À quel moment planter des tulipes ?"),
    ("Comment tailler un rosier ?", "Comment faut-il tailler un rosier ?"),
    ("C'est quoi un VPN ?", "Qu'est-ce qu'un VPN ?"),
    ("Comment faire un levain ?", "Quelle est la meilleure façon de faire un levain ?"),
    ("Pourquoi mon ordinateur est-il lent ?", "Pourquoi mon ordinateur est-il si lent ?"),
    ("Est-il légal de voter à 16 ans ?", "Voter à 16 ans, est-ce légal ?"),
    (
        "Que s'est-il passé le mois suivant la révolution ?",
        "Que s'est il passé le mois suivant la révolution",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("question", "stored"), PARAPHRASES)
def test_paraphrases_pass(question: str, stored: str) -> None:
    for a, b in ((question, stored), (stored, question)):
        assert _served(a, b), false_hit_check(a, b).details


def test_the_refusals_name_the_kinds() -> None:
    assert kinds_differ("How do I prune a rose bush?", "When do I prune a rose bush?") == (
        ["how"],
        ["when"],
    )
    assert kinds_differ("Qui peut devenir notaire ?", "Comment devenir notaire ?") == (
        ["who"],
        ["how"],
    )
    assert kinds_differ("What is a will?", "How do I write a will?") == (["definition"], ["how"])
    result = false_hit_check(
        "Why do twins have the same fingerprints?", "Why do twins have different fingerprints?"
    )
    assert result.failed == ("opposites",)
    assert opposites("Est-il légal de voter ?", "Est-il illégal de voter ?") == ["legal", "illegal"]


def test_helpers() -> None:
    assert asks_manner("How is compost made?") and asks_manner("Comment faire un levain ?")
    assert not asks_manner("How big is the sun?") and not asks_manner("How many cats are there?")
    assert opening_kind("When do I prune roses?") == "when"
    assert opening_kind("Qui peut voter ?") == "who"
    assert opening_kind("What should I do when it rains?") is None
    assert asks_definition("What is a software project?") and asks_definition("What does VPN mean?")
    assert asks_definition("Qu'est-ce que le compost ?") and asks_definition("C'est quoi un NAS ?")
    assert not asks_definition("What is the best way to learn Python?")
    assert not asks_definition("What is it like to live in Paris?")
    assert not asks_definition("Qu'est-ce que je dois faire ?")


def test_forward_references() -> None:
    assert is_deictic("What should I do in the following situation?")
    assert is_deictic("What should I do in following situation?")
    assert is_deictic("What is wrong with the code below?")
    assert is_deictic("Que signifie la phrase suivante ?")
    assert is_deictic("Comment corriger le texte ci-dessous ?")
    # The text is given, or "following" / "below" / "suivant" point at nothing unseen.
    assert not is_deictic("Is the following true: the earth is flat?")
    assert not is_deictic("Which of the following is a mammal, a whale, a shark or a trout?")
    assert not is_deictic("What happened in the following years?")
    assert not is_deictic("Is there any benefit in following the rules?")
    assert not is_deictic("Why does water freeze below zero?")
    assert not is_deictic("Quelle distance garder avec le véhicule suivant ?")
