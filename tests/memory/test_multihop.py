"""Questions needing several pieces, detected by rule, and their sub-queries (EN and FR)."""

from __future__ import annotations

import pytest

from eko.memory.multihop import decompose, names_in


@pytest.mark.parametrize(
    ("question", "subs"),
    [
        (
            "What subject have Caroline and Melanie both painted?",
            ["What subject have Caroline painted?", "What subject have Melanie painted?"],
        ),
        (
            "Did Jon and Gina both participate in dance competitions?",
            [
                "Did Jon participate in dance competitions?",
                "Did Gina participate in dance competitions?",
            ],
        ),
        (
            "Qu'ont fait Jon et Gina tous les deux ?",
            ["Qu'ont fait Jon?", "Qu'ont fait Gina?"],
        ),
        (
            "Quelle ville Jean et Marie ont-ils visitée en commun ?",
            ["Quelle ville Jean ont-ils visitée?", "Quelle ville Marie ont-ils visitée?"],
        ),
    ],
)
def test_two_people_make_one_sub_query_each(question: str, subs: list[str]) -> None:
    hop = decompose(question)
    assert hop.shape == "people" and hop.needs_several
    assert hop.sub_queries == subs


def test_two_clauses_make_one_sub_query_each_carrying_the_people() -> None:
    hop = decompose("When did Jon open his studio and where is it?")
    assert hop.shape == "clauses"
    assert hop.sub_queries == ["When did Jon open his studio", "where is it? Jon"]
    french = decompose("Quand Gina a-t-elle ouvert sa boutique et où est-elle ?")
    assert french.shape == "clauses"
    assert french.sub_queries == ["Quand Gina a-t-elle ouvert sa boutique", "où est-elle? Gina"]


@pytest.mark.parametrize(
    "question",
    [
        "What books has Melanie read?",
        "What activities does Melanie partake in?",
        "How many children does Melanie have?",
        "Quels livres Maria a-t-elle lus ?",
        "Combien d'enfants a Melanie ?",
        "What LGBTQ+ events has Caroline participated in?",
        "What musical artists/bands has Melanie seen?",
        "What has Melanie painted?",
        "Qu'est-ce que Mélanie a peint ?",
        "Qu'est-ce que Jon a visité ?",
    ],
)
def test_list_questions_need_several_turns_but_no_sub_query(question: str) -> None:
    hop = decompose(question)
    assert hop.shape == "list" and hop.needs_several and hop.sub_queries == []


@pytest.mark.parametrize(
    "question",
    [
        "What did Caroline research?",
        "When did Melanie go to the museum?",
        "Où habite Corentin ?",
        "What is Caroline's relationship status?",
        "Qu'est-ce que Jon aime ?",
        "Rock and roll is what Jon likes?",  # "and" between lowercase words: one piece
        "",
    ],
)
def test_single_questions_stay_whole(question: str) -> None:
    hop = decompose(question)
    assert hop.shape == "single" and not hop.needs_several and hop.sub_queries == []


def test_names_skip_question_words_months_and_possessives() -> None:
    assert names_in("When did Caroline's sister visit Paris in May?") == ["Caroline", "Paris"]
    assert names_in("Quand Élodie est-elle allée à Besançon ?") == ["Élodie", "Besançon"]
