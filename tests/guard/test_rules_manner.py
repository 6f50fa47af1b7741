"""A manner question against a decision or an outcome (issue 36, eko/guard/rules_words.py):
"How do I X?" asks the way; "Should I X?" asks whether to, "What do I gain from X?" asks what
comes of it. The check before this rule served all the pairs of these families (the content
words are the same); the paraphrases of the same shape must still pass."""

from __future__ import annotations

import pytest

from eko.guard.check import false_hit_check
from eko.guard.rules_frames import is_yes_no
from eko.guard.rules_words import asks_decision, kinds_differ, outcome_marks
from tests.guard.pair_checks import refused_either_way, served_either_way

DECISION_EN = [
    ("How do I resign from my job?", "Should I resign from my job?"),
    ("How do I rent an apartment in Berlin?", "Should I rent an apartment in Berlin?"),
    ("How can I buy bitcoin?", "Should I buy bitcoin?"),
    ("How do I text my ex?", "Should I text my ex?"),
    ("How do I study medicine?", "Should I study medicine?"),
    ("How do I get a tattoo?", "Should I get a tattoo?"),
    ("How do I confront my roommate?", "Should I confront my roommate?"),
    ("How do I report my neighbour?", "Must I report my neighbour?"),
    ("How can I refinance my mortgage?", "Is it worth it to refinance my mortgage?"),
    ("How do I learn Kotlin?", "Shall I learn Kotlin?"),
    ("How do I file taxes as a student?", "Do I have to file taxes as a student?"),
]
DECISION_FR = [
    ("Comment démissionner de mon poste ?", "Dois-je démissionner de mon poste ?"),
    ("Comment louer un appartement à Berlin ?", "Faut-il louer un appartement à Berlin ?"),
    ("Comment acheter du bitcoin ?", "Faut-il acheter du bitcoin ?"),
    ("Comment écrire à mon ex ?", "Dois-je écrire à mon ex ?"),
    ("Comment étudier la médecine ?", "Est-ce que je dois étudier la médecine ?"),
    ("Comment se faire tatouer ?", "Faut-il se faire tatouer ?"),
    ("Comment parler à mon colocataire ?", "Dois-je parler à mon colocataire ?"),
    ("Comment signaler mon voisin ?", "Doit-on signaler son voisin ?"),
    ("Comment renégocier mon prêt ?", "Est-ce qu'il faut renégocier mon prêt ?"),
    ("Comment apprendre le Kotlin ?", "Faut-il apprendre le Kotlin ?"),
]
OUTCOME_EN = [
    ("How do I learn Italian?", "What can I get by learning Italian?"),
    ("How can I learn to draw?", "What do I gain from learning to draw?"),
    ("How do I learn the piano?", "What will I get out of learning the piano?"),
    ("How do I stop drinking coffee?", "What happens if I stop drinking coffee?"),
    ("How do I sleep eight hours?", "What happens when I sleep eight hours?"),
    ("How do I do pilates?", "What does pilates do for you?"),
    ("How can I journal every day?", "What can journaling every day do for me?"),
    ("How do I keep a diary?", "What is keeping a diary good for?"),
    ("How can I walk every day?", "What will I achieve by walking every day?"),
    ("How do I fast on water?", "What happens to the body if I fast on water?"),
]
OUTCOME_FR = [
    ("Comment apprendre l'italien ?", "Que gagne-t-on à apprendre l'italien ?"),
    ("Comment apprendre à dessiner ?", "Qu'est-ce qu'on gagne à apprendre à dessiner ?"),
    ("Comment apprendre le piano ?", "Qu'apporte l'apprentissage du piano ?"),
    ("Comment arrêter le café ?", "Que se passe-t-il si on arrête le café ?"),
    ("Comment dormir huit heures ?", "Qu'est-ce qui se passe si on dort huit heures ?"),
    ("Comment faire du pilates ?", "Qu'est-ce que ça apporte de faire du pilates ?"),
    ("Comment tenir un journal ?", "À quoi sert de tenir un journal ?"),
    ("Comment utiliser un tableur ?", "À quoi sert un tableur ?"),
    ("Comment marcher tous les jours ?", "À quoi ça sert de marcher tous les jours ?"),
    ("Comment jeûner à l'eau ?", "Que se passe-t-il dans le corps si on jeûne à l'eau ?"),
]
FAMILIES = {
    "manner vs decision, en": DECISION_EN,
    "manner vs decision, fr": DECISION_FR,
    "manner vs outcome, en": OUTCOME_EN,
    "manner vs outcome, fr": OUTCOME_FR,
}
# The same question: a degree against a yes/no, a manner in other words, a decision or an
# outcome on both sides.
PARAPHRASES = [
    ("Is scuba diving dangerous?", "How dangerous is scuba diving?"),
    ("Is sugar addictive?", "How addictive is sugar?"),
    ("How can I gain muscle?", "What is the best way to gain muscle?"),
    ("How do I register a company?", "What are the steps to register a company?"),
    ("How can I stop snoring?", "How do I stop snoring?"),
    ("Can I learn to swim at 50?", "Is it possible to learn to swim at 50?"),
    ("What do I gain from learning Italian?", "What do I gain by learning Italian?"),
    ("What are the benefits of yoga?", "What are the advantages of yoga?"),
    ("How can I benefit from yoga?", "How do I benefit from yoga?"),
    ("What should I do to get a job?", "How can I get a job?"),
    ("Comment gagner du muscle ?", "Quelle est la meilleure façon de gagner du muscle ?"),
    ("Comment créer une entreprise ?", "Quelles sont les étapes pour créer une entreprise ?"),
    ("Faut-il apprendre le Kotlin ?", "Dois-je apprendre le Kotlin ?"),
    ("Quels sont les bienfaits du yoga ?", "Quels sont les avantages du yoga ?"),
    ("À quoi sert un tableur ?", "À quoi sert exactement un tableur ?"),
]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_has_ten_pairs_none_served(family: str) -> None:
    pairs = FAMILIES[family]
    assert len(pairs) >= 10
    assert served_either_way(pairs) == []


@pytest.mark.parametrize(("question", "stored"), PARAPHRASES)
def test_paraphrases_pass(question: str, stored: str) -> None:
    assert refused_either_way(question, stored) == []


def test_the_refusal_names_the_kinds() -> None:
    result = false_hit_check("How do I resign from my job?", "Should I resign from my job?")
    assert result.failed == ("kind",)
    assert result.details["kind"] == {"question": ["how"], "stored": ["decision"]}
    assert kinds_differ("What can I get by learning Italian?", "How do I learn Italian?") == (
        ["outcome"],
        ["how"],
    )


def test_helpers() -> None:
    assert asks_decision("Should I learn Kotlin?") and asks_decision("Devrais-je partir ?")
    assert asks_decision("Est-ce que je dois partir ?") and asks_decision("Is it worth it to go?")
    assert not asks_decision("Can I learn Kotlin?") and not asks_decision("Is Kotlin hard?")
    assert not asks_decision("How should I learn Kotlin?")
    assert outcome_marks("What can I get by learning Italian?") == {"get"}
    assert outcome_marks("What should I do to get a job?") == set()
    assert outcome_marks("What should I do for a living?") == set()
    assert outcome_marks("À quoi sert un tableur ?") == {"sert"}
    # "À quoi …" starts with a preposition, not with "a" (has): no yes/no question.
    assert not is_yes_no("À quoi sert un tableur ?") and is_yes_no("A-t-il plu hier ?")
