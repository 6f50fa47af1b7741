"""The verifier's general rule (issue 36, eko/guard/rules_content.py): every content word of each
question must be matched in the other (same word, inflection, synonym), and the question kinds
it refines (eko/guard/rules_words.py, rules_frames.py). Each family: ten or more look-alikes
per language that must not be served (the check before issue 36 served them), and
paraphrases of the same shape that must still pass."""

from __future__ import annotations

import pytest

from eko.guard.check import false_hit_check
from eko.guard.rules_content import LexiconError, build_lexicon, load_lexicon, unmatched
from eko.guard.stem import stem
from tests.guard.pair_checks import refused_either_way, served_either_way

CONTENT_ADDED_EN = [
    (
        "What are the advantages and disadvantages of WhatsApp?",
        "What are the disadvantages of WhatsApp?",
    ),
    ("Is brown rice healthy?", "Is rice healthy?"),
    ("How do I become a nurse in the army?", "How do I become a nurse?"),
    ("What is the best gaming laptop?", "What is the best laptop?"),
    ("How do I learn to drive as a teenager?", "How do I learn to drive?"),
    ("What do polar bears eat?", "What do bears eat?"),
    ("How do I wash a wool sweater?", "How do I wash a sweater?"),
    ("How do I make cold brew coffee?", "How do I make coffee?"),
    ("Which is the best and worst Bollywood movie?", "Which is the worst Bollywood movie?"),
    ("How does the immune system work?", "What other systems work with the immune system?"),
    ("Who can love me?", "Who can love?"),
]
CONTENT_ADDED_FR = [
    (
        "Quels sont les avantages et les inconvénients d'Instagram ?",
        "Quels sont les inconvénients d'Instagram ?",
    ),
    ("Le riz complet est-il bon pour la santé ?", "Le riz est-il bon pour la santé ?"),
    ("Comment devenir infirmière dans l'armée ?", "Comment devenir infirmière ?"),
    (
        "Quel est le meilleur ordinateur portable pour jouer ?",
        "Quel est le meilleur ordinateur portable ?",
    ),
    ("Que mangent les ours polaires ?", "Que mangent les ours ?"),
    ("Comment laver un pull en laine ?", "Comment laver un pull ?"),
    (
        "Quels sont les symptômes du diabète chez la femme ?",
        "Quels sont les symptômes du diabète ?",
    ),
    ("Comment faire du café glacé ?", "Comment faire du café ?"),
    ("Comment apprendre à conduire en hiver ?", "Comment apprendre à conduire ?"),
    ("Quelle est la meilleure voiture électrique ?", "Quelle est la meilleure voiture ?"),
]
DATES_EN = [
    ("Is it cold in Madrid in January?", "Is it cold in Madrid in July?"),
    ("Are supermarkets open on Sunday?", "Are supermarkets open on Monday?"),
    ("Is the museum free on Fridays?", "Is the museum free on Wednesdays?"),
    ("Is August a good month to visit Greece?", "Is February a good month to visit Greece?"),
    ("What is celebrated in November?", "What is celebrated in February?"),
    ("What is the weather in Rome in spring?", "What is the weather in Rome in autumn?"),
    ("Who won the Super Bowl in 2015?", "Who won the Super Bowl in 2017?"),
    ("What happened on 6 June 1944?", "What happened on 6 June 1984?"),
    ("What music was popular in the 1960s?", "What music was popular in the 1970s?"),
    ("Do shops close early on Saturdays?", "Do shops close early on Tuesdays?"),
]
DATES_FR = [
    ("Fait-il froid à Madrid en janvier ?", "Fait-il froid à Madrid en juillet ?"),
    (
        "Les supermarchés sont-ils ouverts le dimanche ?",
        "Les supermarchés sont-ils ouverts le lundi ?",
    ),
    ("Le musée est-il gratuit le vendredi ?", "Le musée est-il gratuit le mercredi ?"),
    (
        "Août est-il un bon mois pour visiter la Grèce ?",
        "Février est-il un bon mois pour visiter la Grèce ?",
    ),
    ("Que fête-t-on en novembre ?", "Que fête-t-on en février ?"),
    ("Quel temps fait-il à Rome au printemps ?", "Quel temps fait-il à Rome en automne ?"),
    ("Qui a gagné le Super Bowl en 2015 ?", "Qui a gagné le Super Bowl en 2017 ?"),
    ("Que s'est-il passé le 6 juin 1944 ?", "Que s'est-il passé le 6 juin 1984 ?"),
    (
        "Quelle musique était populaire dans les années 60 ?",
        "Quelle musique était populaire dans les années 70 ?",
    ),
    ("Les magasins ferment-ils tôt le samedi ?", "Les magasins ferment-ils tôt le mardi ?"),
]
KIND_EN = [
    ("Is red wine healthy?", "Which red wine is healthy?"),
    ("Is beer fattening?", "Which beer is fattening?"),
    ("Is Java a good language for beginners?", "Which language is good for beginners?"),
    ("Why do dogs bark?", "How do dogs bark?"),
    ("Why is the ocean salty?", "How salty is the ocean?"),
    ("Why do cats purr?", "How do cats purr?"),
    ("How do I use a payment gateway?", "Which payment gateway should I use?"),
    ("How do I cook rice?", "Which rice should I cook?"),
    ("Is green tea healthy?", "Which green tea is healthy?"),
    ("Why do birds sing?", "How do birds sing?"),
]
KIND_FR = [
    ("Le vin rouge est-il bon pour la santé ?", "Quel vin rouge est bon pour la santé ?"),
    ("La bière fait-elle grossir ?", "Quelle bière fait grossir ?"),
    ("Java est-il un bon langage pour débuter ?", "Quel langage est bon pour débuter ?"),
    ("Pourquoi les chiens aboient-ils ?", "Comment les chiens aboient-ils ?"),
    ("Pourquoi les chats ronronnent-ils ?", "Comment les chats ronronnent-ils ?"),
    ("Comment utiliser une passerelle de paiement ?", "Quelle passerelle de paiement utiliser ?"),
    ("Comment cuire le riz ?", "Quel riz faut-il cuire ?"),
    ("Le thé vert est-il bon pour la santé ?", "Quel thé vert est bon pour la santé ?"),
    ("Pourquoi les oiseaux chantent-ils ?", "Comment les oiseaux chantent-ils ?"),
    ("Le café est-il mauvais pour le cœur ?", "Quel café est mauvais pour le cœur ?"),
]
FAMILIES = {
    "a content word added, en": CONTENT_ADDED_EN,
    "a content word added, fr": CONTENT_ADDED_FR,
    "dates, en": DATES_EN,
    "dates, fr": DATES_FR,
    "question kind, en": KIND_EN,
    "question kind, fr": KIND_FR,
}
# Same question, other words or forms: the alignment must let them through.
PARAPHRASES = [
    ("How do I feed my cats?", "How should I feed my cat?"),  # plural
    ("How can I stop smoking?", "How do I stop smoking?"),
    ("What is the fastest way to gain muscle?", "How can I gain muscle quickly?"),  # synonym
    ("Where can I buy a cheap car?", "Where can I purchase a cheap automobile?"),
    ("Which team won the 2015 Super Bowl?", "Who won the Super Bowl in 2015?"),  # answer type
    (
        "Who was the 16th president of the United States?",
        "Who was the sixteenth president of the United States?",
    ),
    ("What are the 10 best books on Go?", "What are the best books on Go?"),  # a list size
    ("Is red wine healthy?", "Is red wine good for your health?"),
    ("Quel fruit contient le plus de sucre ?", "Quel est le fruit le plus sucré ?"),
    (
        "Les chats sont-ils plus rapides que les lapins ?",
        "Le chat est-il plus rapide que le lapin ?",
    ),
    ("Que mangent les pandas ?", "De quoi se nourrissent les pandas ?"),
    ("Comment faire du café glacé ?", "Comment préparer un café glacé ?"),
    (
        "Qui était le 16e président des États-Unis ?",
        "Qui était le seizième président des États-Unis ?",
    ),
    ("Pourquoi les chiens aboient-ils ?", "Pourquoi est-ce que les chiens aboient ?"),
]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_has_ten_pairs_none_served(family: str) -> None:
    pairs = FAMILIES[family]
    assert len(pairs) >= 10
    assert served_either_way(pairs) == []


@pytest.mark.parametrize(("question", "stored"), PARAPHRASES)
def test_paraphrases_align(question: str, stored: str) -> None:
    assert refused_either_way(question, stored) == []


def test_a_refusal_names_the_words_left_over() -> None:
    result = false_hit_check("Is brown rice healthy?", "Is rice healthy?")
    assert result.failed == ("content",)
    assert result.details["content"] == {"only_question": ["brown"], "only_stored": []}
    assert unmatched("How do I feed my cats?", "How should I feed my cat?") == ([], [])


def test_the_stemmer_meets_inflections_in_both_languages() -> None:
    for words in (("cats", "cat"), ("running", "run"), ("stopped", "stop"), ("making", "make")):
        assert len({stem(w) for w in words}) == 1, words
    french: tuple[tuple[str, ...], ...] = (
        ("grande", "grands", "grand"),
        ("mangent", "manger", "mange"),
        ("perdu", "perdre"),
    )
    for forms in french:
        assert len({stem(w, "fr") for w in forms}) == 1, forms
    assert stem("wine") != stem("win")  # a base's final e stays


def test_the_shipped_lexicon_loads_and_refuses_an_antonym_among_synonyms() -> None:
    lexicon = load_lexicon()
    assert lexicon.synonyms(stem("buy"), stem("purchase"))
    assert not lexicon.synonyms(stem("buy"), stem("sell"))
    data = {
        "function_words": {"en": [], "fr": []},
        "modifiers": [],
        "synonyms": [["buy", "sell", "purchase"]],
        "antonyms": [["buy", "sell"]],
    }
    with pytest.raises(LexiconError):
        build_lexicon(data)
