"""Only questions become entries or get a cached answer; an answer that depends on the user is
never learned; every refusal has a code and a sentence (eko.guard.validation, FR and EN)."""

from __future__ import annotations

import pytest

from eko.guard.utterance import facts_in_answer, is_question, refers_to_user
from eko.guard.validation import (
    REFUSALS,
    lookup_refusal,
    question_refusal,
    refusal_text,
    reply_privacy,
    reply_refusal,
)

NOT_QUESTIONS = [
    "je pars à Lyon demain",
    "Je pars à Lyon demain.",
    "I'm going to Lyon tomorrow",
    "merci !",
    "Merci beaucoup Eko",
    "thank you so much",
    "ok",
    "OK merci",
    "d'accord",
    "hello",
    "Bonjour !",
    "salut",
    "C'est noté.",
    "Le train part à 9h.",
]
QUESTIONS = [
    "Comment exporter mon agenda vers Outlook ?",
    "How do I export my calendar to Outlook?",
    "how to learn python",
    "Quel temps fait-il à Lyon",
    "y a-t-il un train pour Marseille",
    "Peux-tu m'expliquer la photosynthèse",
    "explain TCP slow start",
    "Bonjour, quelle est la capitale du Pérou",
    "je voudrais savoir comment résilier",
    "Horaires d'ouverture",
    "Is Python slow",
    "Tu sais faire quoi ?",
]


@pytest.mark.parametrize("text", NOT_QUESTIONS)
def test_statements_greetings_and_thanks_are_not_questions(text: str) -> None:
    assert not is_question(text)
    assert question_refusal(text) == "not_a_question"
    assert lookup_refusal(text) == "not_a_question"


@pytest.mark.parametrize("text", QUESTIONS)
def test_questions_and_requests_are(text: str) -> None:
    assert is_question(text)
    assert question_refusal(text) is None
    assert lookup_refusal(text) is None


@pytest.mark.parametrize(
    ("text", "about_user"),
    [
        ("What's my name?", True),
        ("Quel est mon prénom ?", True),
        ("Où est mon colis ?", True),
        ("How old am I?", True),
        ("J'ai mal à la tête, que faire ?", True),
        ("Que sais-tu sur moi ?", True),
        ("What do you know about me?", True),
        # A how-to's possessive is generic; a bare "I" or "me" is not about the asker.
        ("How do I export my calendar to Outlook?", False),
        ("Comment exporter mon agenda ?", False),
        ("How do I reset a password?", False),
        ("Peux-tu m'expliquer la photosynthèse ?", False),
        ("Quelle est la capitale du Pérou ?", False),
    ],
)
def test_questions_about_the_asker(text: str, about_user: bool) -> None:
    assert refers_to_user(text) is about_user


def test_an_answer_repeating_a_fact_is_found_by_whole_words_accents_folded() -> None:
    facts = {"main_city": "Lyon", "first_name": "Marie", "use_tu_form": True, "pet": "oui"}
    assert facts_in_answer("Depuis LYON, prends le train.", facts) == ["main_city"]
    assert facts_in_answer("Bonjour Marie !", facts) == ["first_name"]
    # Part of a word, a boolean or a generic value says nothing.
    assert facts_in_answer("Les Lyonnais disent oui, vrai.", facts) == []
    assert facts_in_answer("Il est à Orléans.", {"city": "orleans"}) == ["city"]
    assert facts_in_answer("Tu fais du vélo et du ski.", {"sports": '["ski", "golf"]'}) == [
        "sports"
    ]


def test_facts_in_the_prompt_keep_an_answer_learnable_for_its_asker() -> None:
    meta = {"personal_context": True, "personal_context_sources": ["facts", "settings"]}
    assert reply_privacy(meta) == "private"
    assert reply_refusal(message_type="message", answer="Paris.", meta=meta) is None


def test_an_answer_that_depends_on_the_user_is_refused_with_its_reason() -> None:
    about = {"personal_context": True, "personal_context_sources": ["facts", "about_the_user"]}
    assert reply_refusal(message_type="message", answer="Marie.", meta=about) == "about_the_user"
    uses = {
        "personal_context": True,
        "personal_context_sources": ["facts"],
        "nodes": {"D": {"data": {"answer_uses_facts": ["main_city"]}}},
    }
    assert reply_refusal(message_type="message", answer="Lyon.", meta=uses) == "uses_user_facts"
    memory = {"personal_context": True, "personal_context_sources": ["memory_facts"]}
    assert reply_refusal(message_type="message", answer="x", meta=memory) == "personal_context"


def test_every_refusal_has_a_sentence() -> None:
    for code, text in REFUSALS.items():
        assert refusal_text(code) == text and text.endswith((".", ")"))
    assert refusal_text("not_an_answer:paywall").endswith("(paywall)")
    assert refusal_text("something_new") == "Not cached (something_new)."
