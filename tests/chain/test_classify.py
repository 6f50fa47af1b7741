"""classify_complexity: one test per rule, French and English, deterministic."""

from __future__ import annotations

import pytest

from eko.chain.classify import ComplexityRules, classify, classify_complexity

LONG = "Je voudrais comprendre comment fonctionne la mémoire de l'assistant " * 7
MEDIUM = "Peux-tu me dire ce que tu penses de cette idée pour mon projet de jardin ?"


@pytest.mark.parametrize(
    ("message", "route", "mode", "rule"),
    [
        ("   ", None, "simple", "empty"),
        ("Analyse ce contrat et compare les offres", "simple", "simple", "route_simple"),
        ("Fix this", "code", "reflexive", "category:code"),
        ("Salut", "archi", "reflexive", "category:archi"),
        ("ok", "data-analyst", "reflexive", "category:data-analyst"),
        ("Pourquoi ?", "raisonnement", "reflexive", "category:raisonnement"),
        ("Analyse mes ventes", None, "reflexive", "keyword:analyse"),
        ("Compare Python and Go", None, "reflexive", "keyword:compare"),
        ("Cherche et explique la photosynthèse", None, "reflexive", "keyword:cherche et explique"),
        ("Une réponse detaillee stp", None, "reflexive", "keyword:détaillée"),
        ("Give me a DETAILED plan", None, "reflexive", "keyword:detailed"),
        ("Explain why the sky is blue", None, "reflexive", "keyword:explain why"),
        ("Lis le fichier notes.txt", None, "reflexive", "tools:fichier"),
        ("What is in the workspace?", None, "reflexive", "tools:workspace"),
        ("Lance le pipeline", None, "reflexive", "tools:pipeline"),
        ("Souviens-toi que j'ai un chat", None, "reflexive", "tools:souviens-toi"),
        ("Bonjour, comment vas-tu ?", None, "simple", "short"),
        ("Hi!", None, "simple", "short"),
        (LONG, None, "reflexive", "long"),
        (
            "Quel temps fait-il à Paris demain ? Et à Lyon, il pleut ?",
            None,
            "reflexive",
            "multi_part",
        ),
        (
            "Trois choses:\n- le prix\n- la date\n- le lieu du concert",
            None,
            "reflexive",
            "multi_part",
        ),
        (MEDIUM, None, "simple", "default"),
    ],
)
def test_each_rule(message: str, route: str | None, mode: str, rule: str) -> None:
    result = classify(message, route)
    assert (result.mode, result.rule) == (mode, rule)
    assert classify_complexity(message, route) == mode


def test_keywords_are_whole_words() -> None:
    assert classify("Je suis psychanalyste depuis longtemps, et toi ?").mode == "simple"
    assert classify("My profile picture, not the profiles").rule != "tools:file"


def test_rules_are_configurable() -> None:
    rules = ComplexityRules(short_chars=5, keywords=("résume",), categories=("maths",))
    assert classify("Bonjour, comment vas-tu ?", rules=rules).rule == "default"
    assert classify("Resume ce texte", rules=rules).rule == "keyword:résume"
    assert classify("2+2", "maths", rules=rules).mode == "reflexive"
    assert classify("Analyse mes ventes", rules=rules).mode == "simple"


def test_it_is_deterministic() -> None:
    assert len({classify(LONG) for _ in range(20)}) == 1
