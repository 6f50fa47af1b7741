from __future__ import annotations

import pytest

from eko.config import Settings
from eko.lobby.mentions import is_mentioned, persona_name
from eko.store.models import Room

MENTIONS = [
    "Eko, tu connais Kraken ?",
    "@eko qui est Corentin ?",
    "eko ?",
    "EKO !",
    "Hé Eko",
    "Éko, c'est quoi le plan Max ?",
    "merci eko.",
    "Eko's answer was right",
    "c'est Corentin, Eko : il est dev chez lemlist",
    "(eko)",
    "on demande à l'Eko du lobby",
]

NOT_MENTIONS = [
    "l'ekologie c'est important",
    "Ekosystem du projet",
    "l'économie va mal",
    "Ekonomie",
    "un eko-système riche",
    "va voir https://eko.example.com pour la doc",
    "écris à eko@example.com",
    "le site eko.example.com est en panne",
    "http://example.com/eko/page",
    "https://example.com/?q=eko",
    "mail: support@eko.org",
    "www.eko.fr",
    "personne ici",
    "",
]


@pytest.mark.parametrize("text", MENTIONS)
def test_a_mention_is_detected(text: str) -> None:
    assert is_mentioned(text, "Eko")


@pytest.mark.parametrize("text", NOT_MENTIONS)
def test_french_false_positives_and_addresses_are_not_mentions(text: str) -> None:
    assert not is_mentioned(text, "Eko")


def test_the_name_is_configurable_and_may_be_accented_or_have_two_words() -> None:
    assert is_mentioned("Lisa, t'es là ?", "Lisa")
    assert not is_mentioned("Eko, t'es là ?", "Lisa")
    assert is_mentioned("hé zoé !", "Zoé")
    assert is_mentioned("Bonjour Mister  Eko", "Mister Eko")
    assert not is_mentioned("Bonjour Mister", "Mister Eko")


def test_an_empty_name_is_an_error() -> None:
    with pytest.raises(ValueError):
        is_mentioned("anything", "  ")


def test_persona_name_per_lobby() -> None:
    settings = Settings(assistant_name="Eko", default_persona="eko")
    assert persona_name(Room(kind="lobby", name="L", persona="eko"), settings) == "Eko"
    assert persona_name(Room(kind="lobby", name="L", persona="lisa"), settings) == "Lisa"
