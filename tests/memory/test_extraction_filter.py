"""Which proposed memory items are written: what the user said, and lasts."""

from __future__ import annotations

import pytest

from eko.memory.extraction_filter import ProposedItem, worth_writing

USER = "Ma sœur Léa joue du violoncelle depuis dix ans, tu connais des morceaux pour un duo ?"
REPLY = "Pour un duo, essaie « Le Cygne » de Saint-Saëns ou des arrangements de Bach."


def kept(
    content: str,
    *,
    kind: str = "fact",
    subject: str = "Léa",
    user: str = USER,
    reply: str = REPLY,
    answered: str | None = None,
) -> bool:
    return worth_writing(
        ProposedItem(kind, subject, content),
        user_text=user,
        answered_text=answered,
        reply_text=reply,
        names=("Camille", "Eko"),
    )


def test_a_fact_the_user_stated_is_kept_in_either_wording() -> None:
    assert kept("La sœur de Camille, Léa, joue du violoncelle.")
    assert kept("Léa joue du violoncelle depuis dix ans")


@pytest.mark.parametrize(
    "content",
    [
        "Eko a proposé « Le Cygne » de Saint-Saëns pour un duo.",  # the assistant's answer
        "Le Cygne de Saint-Saëns est un morceau pour duo.",
    ],
)
def test_what_the_assistant_said_is_not_a_memory_of_the_user(content: str) -> None:
    assert not kept(content, subject="Saint-Saëns")


def test_a_question_a_request_a_hypothesis_or_a_mood_is_not_kept() -> None:
    assert not kept("Tu connais des morceaux pour un duo de violoncelle ?")
    assert not kept("Camille demande des morceaux de violoncelle pour Léa.")
    assert not kept(
        "Si j'avais un chat, il s'appellerait Pixel.", user="Si j'avais un chat, quel nom ?"
    )
    user = "Je suis crevée aujourd'hui, il fait gris à Lille."
    assert not kept("Camille est crevée aujourd'hui.", subject="Camille", user=user)
    # The same words without "today" are a lasting fact.
    assert kept("Camille habite à Lille.", subject="Camille", user="J'habite à Lille.")


def test_an_item_that_only_names_its_subject_says_nothing() -> None:
    assert not kept("Léa")


def test_an_answer_to_the_assistants_question_counts_as_said() -> None:
    assert kept(
        "Camille est kiné à Bordeaux.",
        subject="Camille",
        user="En libéral, oui.",
        answered="Tu es kiné à Bordeaux, c'est ça ?",
        reply="Super !",
    )


def test_a_curiosity_may_be_a_question() -> None:
    user = "Corentin m'a encore parlé de son projet Atlas."
    assert kept("Qui est Corentin ?", kind="goal", subject="Corentin", user=user)
    # A curiosity is a request to oneself; it only has to name what the user said.
    assert kept("Ask Camille who Corentin is", kind="goal", subject="Corentin", user=user)
    assert not kept("Ask Camille about Bach", kind="goal", subject="Bach", user=user)


def test_a_question_states_only_its_lead_in() -> None:
    asked = "What is the capital of Australia?"
    assert not kept("The capital of Australia is Canberra.", user=asked, reply="Canberra.")
    allergic = "Je suis allergique aux arachides, tu as une recette de cookies ?"
    assert kept("Lucas est allergique aux arachides.", subject="Lucas", user=allergic)
    assert not kept("Lucas veut une recette de cookies.", subject="Lucas", user=allergic)
