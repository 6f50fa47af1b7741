"""A reply never says it stored something: the sentence is removed after the writer."""

from __future__ import annotations

import pytest

from eko.chat.grounding.storage_claims import claims_storage, without_storage_claims


@pytest.mark.parametrize(
    "sentence",
    [
        "I'll remember that your sister plays the cello.",
        "Great, I've added it to my database.",
        "Je m’en souviendrai !",
        "C'est enregistré dans ma mémoire.",
        "Je l'ai noté.",
        "I'll keep that in mind for next time.",
    ],
)
def test_storage_claims_in_both_languages(sentence: str) -> None:
    assert claims_storage(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "I will add salt to the soup.",
        "Do you remember the name of the song?",
        "Tu te souviens de son nom ?",
        "Store it in a cool, dry place.",
        "Ta sœur joue du violoncelle.",
    ],
)
def test_ordinary_sentences_are_not_claims(sentence: str) -> None:
    assert not claims_storage(sentence)


def test_only_the_claiming_sentence_is_removed() -> None:
    text, removed = without_storage_claims(
        "Super ! Je m'en souviendrai. Léa joue depuis longtemps ?\n\n- Bach\n- Fauré"
    )
    assert text == "Super ! Léa joue depuis longtemps ?\n\n- Bach\n- Fauré"
    assert removed == ["Je m'en souviendrai."]


def test_a_reply_made_only_of_claims_comes_back_empty() -> None:
    assert without_storage_claims("Noted. I'll remember that.") == (
        "Noted.",
        ["I'll remember that."],
    )
    assert without_storage_claims("I'll remember that.") == ("", ["I'll remember that."])
