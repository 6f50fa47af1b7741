"""The rule router (issue 34's lean path): the message's words propose a route."""

from __future__ import annotations

import pytest

from eko.chat.engine.rule_router import intent_by_rules, propose_by_rules


@pytest.mark.parametrize(
    ("message", "intent"),
    [
        ("Quelle est la capitale du Canada ?", "general_question"),
        ("What is 12 times 12?", "general_question"),
        # Thanks asked about, not given.
        ("How do you say thank you in French?", "general_question"),
        ("Comment dit-on merci en espagnol ?", "general_question"),
        # "should I" with no alternative is not a decision…
        ("How many minutes should I boil an egg?", "general_question"),
        # … with two options it is, accents or not.
        ("Should I take the bus or the train to work?", "decision_support"),
        ("j'hesite entre deux appartements", "decision_support"),
        ("Merci beaucoup, bonne soirée !", "amabilities"),
        ("Salut ! Quoi de neuf ?", "small_talk"),
        # A greeting inside a long request is not small talk.
        (
            "Bonjour, peux-tu m'expliquer comment fonctionne un moteur électrique de voiture ?",
            "general_question",
        ),
        ("Mon fils a avalé une pile, que faire ?", "urgent_request"),
        ("I can't sleep and I feel anxious all the time.", "sensitive_question"),
        ("Réserve-moi une table pour deux ce soir.", "action_request"),
        ("What can you do for me?", "functional_question"),
        ("Write a detailed plan to launch my podcast.", "deep_work"),
        ("Rédige une relance pour un client qui ne paie pas sa facture.", "professional_request"),
        ("Boost-moi, je n'ai aucune motivation ce matin.", "motivational_guidance"),
    ],
)
def test_the_words_of_the_message_choose_the_intent(message: str, intent: str) -> None:
    assert intent_by_rules(message) == intent


def test_a_proposal_by_rules_is_trusted_and_asks_context_only_about_the_user() -> None:
    plain = propose_by_rules("What is the capital of Peru?")
    assert (plain.intent, plain.context_level, plain.confidence) == ("general_question", "light", 1)
    personal = propose_by_rules("What instruments does my sister play?")
    assert personal.context_level == "medium"


def test_fresh_facts_ask_for_the_web_and_scopes_are_chosen_by_their_words() -> None:
    weather = propose_by_rules("Quelle météo demain à Lyon ?")
    assert weather.need_web and weather.web_search_prompt == "Quelle météo demain à Lyon ?"
    scopes = [("billing", "invoices, refunds and payment terms"), ("hr", "holidays, payroll")]
    asked = propose_by_rules("How do refunds work?", scopes=scopes)
    assert asked.scopes_selected == ("billing",) and asked.scope_need
    assert not propose_by_rules("What is 2 plus 2?", scopes=scopes).scope_need
