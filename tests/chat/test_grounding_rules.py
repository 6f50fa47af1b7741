"""The grounding rules alone: which questions are about the user's life, what counts as memory
holding their subject, and which replies claim to know (eko/chat/grounding)."""

from __future__ import annotations

import pytest

from eko.chat.grounding.check import (
    asserts_unknown,
    check_reply,
    dont_know_answer,
    only_asks,
    says_unknown,
)
from eko.chat.grounding.memory import memory_texts, remembered
from eko.chat.grounding.personal import personal_question
from eko.chat.grounding.report import GroundingReport
from eko.prompts.library import PromptLibrary

PERSONAL = [
    ("What instruments does my sister play?", "sister"),
    ("what's my dog's name", "pet"),
    ("Who is my best friend?", "friend"),
    ("How old is my son?", "son"),
    ("Where does my mother live?", "mother"),
    ("Tell me my brother's job", "brother"),
    ("Do you remember my cat's name?", "pet"),
    ("Do I have any pets?", "pet"),
    ("Where do I live?", "home"),
    ("How old am I?", "age"),
    ("What's my name?", "name"),
    ("What is my favourite film?", "tastes"),
    ("What is my flight number?", "plans"),
    ("Who am I?", "self"),
    ("Ma femme s'appelle comment ?", "wife"),
    ("Comment s'appelle ma sœur ?", "sister"),
    ("De quel instrument joue mon frère ?", "brother"),
    ("Quel âge a mon fils ?", "son"),
    ("Quelle est la date de naissance de ma mère ?", "mother"),
    ("Où j'habite ?", "home"),
    ("Comment je m'appelle ?", "name"),
    ("Quel est mon film préféré ?", "tastes"),
    ("Est-ce que j'ai des enfants ?", "children"),
    ("Qui suis-je ?", "self"),
    ("Tu te souviens du nom de mon chien ?", "pet"),
    # The user as subject, no possessive.
    ("Which football team do I support?", "sport"),
    ("What am I allergic to?", "food"),
    ("Quelle voiture je conduis ?", "car"),
    ("À quoi suis-je allergique ?", "food"),
]

NOT_PERSONAL = [
    # Tasks on what the user gives: the answer is in their data, not in memory.
    "Analyse mes ventes",
    "Summarize my week in three bullets.",
    "Compare mes deux offres d'emploi",
    # Their tools and their work: the answer is in what they give, not in memory.
    "Why does my code crash?",
    "What does my code do?",
    "My computer is slow, what can I do?",
    "Quelle est l'erreur dans mon code ?",
    "Peux-tu corriger ma lettre ?",
    "Mon ordinateur est lent, que faire ?",
    # Advice and tasks: the model may help without knowing anything.
    "What should I get my sister for her birthday?",
    "Écris un mot pour ma mère",
    "Quel cadeau offrir à mon frère ?",
    # How-to and why.
    "How do I reset my password?",
    "Pourquoi mon chat miaule la nuit ?",
    "Comment exporter mon agenda ?",
    "Do I have to restart the server?",
    "What do I need to install Python?",
    "What did I do wrong in this code?",
    "Que puis-je cuisiner ce soir ?",
    # Statements, and questions about the world.
    "My sister plays the cello.",
    "Ma sœur joue du violon.",
    "What is the capital of France?",
    "Quelle est la meilleure façon d'apprendre le piano ?",
    "Who wrote Hamlet?",
    "Traduis en anglais : ma soeur joue du piano",
]


@pytest.mark.parametrize(("text", "subject"), PERSONAL)
def test_questions_about_the_users_life_are_personal(text: str, subject: str) -> None:
    question = personal_question(text)
    assert question is not None, text
    assert question.subject == subject


@pytest.mark.parametrize("text", NOT_PERSONAL)
def test_other_questions_are_not(text: str) -> None:
    assert personal_question(text) is None


def test_memory_holds_a_subject_in_either_language() -> None:
    sister = personal_question("What instruments does my sister play?")
    assert sister is not None
    french = memory_texts(facts=[], user_turns=["Ma sœur Léa joue du violon."], recalled=[])
    assert remembered(sister, french)
    other = memory_texts(facts=[], user_turns=["Mon frère habite à Nantes."], recalled=[])
    assert not remembered(sister, other)
    assert not remembered(sister, [])


def test_the_questions_own_words_are_evidence_too() -> None:
    car = personal_question("Quelle voiture je conduis ?")
    assert car is not None
    assert remembered(car, ["Je conduis une vieille Clio bleue."])
    assert not remembered(car, ["Je prends le train tous les matins."])


def test_facts_and_recalled_memory_count() -> None:
    home = personal_question("Où j'habite ?")
    assert home is not None
    assert remembered(home, memory_texts(facts=[("main_city", "Lyon")], user_turns=[], recalled=[]))
    assert remembered(
        home, memory_texts(facts=[], user_turns=[], recalled=["- user moved to Lisbon in May"])
    )
    name = personal_question("What's my name?")
    assert name is not None
    assert remembered(
        name, memory_texts(facts=[("first_name", "Marie")], user_turns=[], recalled=[])
    )
    assert not remembered(
        name, memory_texts(facts=[("main_city", "Lyon")], user_turns=[], recalled=[])
    )


def test_a_question_about_the_user_as_a_whole_is_answered_by_anything_known() -> None:
    who = personal_question("Qui suis-je ?")
    assert who is not None
    assert not remembered(who, [])
    assert remembered(
        who, memory_texts(facts=[("main_activity", "architecte")], user_turns=[], recalled=[])
    )


@pytest.mark.parametrize(
    "reply",
    [
        "I don't know — you haven't told me about your sister yet.",
        "I do not know which instruments she plays. Can you tell me?",
        "Je ne sais pas : tu ne m'as jamais parlé de ta sœur.",
        "Tu ne m’as pas encore dit où tu habites. Tu me le dis ?",
        "Je n'ai aucune information sur ton chien.",
        "Which instruments does she play?",
        "Quel est son nom ?",
    ],
)
def test_a_reply_that_does_not_know_or_only_asks_passes(reply: str) -> None:
    assert not asserts_unknown(reply)


@pytest.mark.parametrize(
    "reply",
    [
        "Your sister plays the piano and the violin.",
        "Ta sœur joue du piano. C'est super !",
        "You live in Paris.",
        "Votre chien s'appelle Rex ?  Non : il s'appelle Max.",
    ],
)
def test_a_reply_asserting_a_fact_is_flagged(reply: str) -> None:
    assert asserts_unknown(reply)
    assert not says_unknown(reply)


def test_only_asks_needs_every_sentence_to_be_a_question() -> None:
    assert only_asks("Quel instrument ? Et depuis quand ?")
    assert not only_asks("She plays the piano. Anything else?")
    assert not only_asks("")


def test_the_check_replaces_an_assertion_only_after_the_note() -> None:
    prompts = PromptLibrary()
    invented = "Your sister plays the piano and the violin."
    without_note = GroundingReport(subject="sister", remembered=True)
    assert check_reply(without_note, invented, prompts, language="en", use_tu=None) == invented
    assert not without_note.checked and not without_note.flagged

    report = GroundingReport(subject="sister", remembered=False, note=True)
    replaced = check_reply(report, invented, prompts, language="en", use_tu=None)
    assert replaced == dont_know_answer(prompts, language="en", use_tu=None)
    assert "don't know" in replaced
    assert report.checked and report.flagged and report.corrected
    assert report.original == invented

    honest = GroundingReport(subject="sister", remembered=False, note=True)
    text = "I don't know: you haven't told me. Which ones does she play?"
    assert check_reply(honest, text, prompts, language="en", use_tu=None) == text
    assert honest.checked and not honest.flagged and not honest.corrected


def test_the_replacement_speaks_the_users_language_and_address_form() -> None:
    prompts = PromptLibrary()
    tu = dont_know_answer(prompts, language="fr", use_tu=None)
    vous = dont_know_answer(prompts, language="fr", use_tu=False)
    assert tu.startswith("Je ne sais pas") and " tu " in f" {tu} "
    assert "vous" in vous and " tu " not in f" {vous} "
    assert says_unknown(tu) and says_unknown(vous)
    assert says_unknown(dont_know_answer(prompts, language="en", use_tu=None))
