"""eko.text: the one home of accent, case and punctuation folding."""

from __future__ import annotations

import unicodedata

import pytest

from eko.text import fold, fold_plain, has_phrase, strip_accents


def _copy_of_the_former_helpers(text: str) -> str:
    """What the eight former copies computed (NFKD, combining marks dropped), kept here as the
    reference the shared module must not drift from."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Été à Noël", "Ete a Noel"),
        ("Où ça ?", "Ou ca ?"),
        ("Ångström", "Angstrom"),
        ("ﬁn²", "fin2"),  # compatibility forms decomposed too
        ("Straße", "Straße"),  # no case change: ß is a letter, not an accented s
        ("", ""),
    ],
)
def test_strip_accents_drops_combining_marks_only(text: str, expected: str) -> None:
    assert strip_accents(text) == expected


def test_strip_accents_is_the_former_helpers_on_every_character() -> None:
    every = "".join(chr(c) for c in range(0x3000) if not 0xD800 <= c <= 0xDFFF)
    assert strip_accents(every) == _copy_of_the_former_helpers(every)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Été", "ete"),
        ("Straße", "strasse"),
        ("ÉKO", "eko"),
        ("Où était-il ?", "ou etait-il ?"),  # punctuation kept
    ],
)
def test_fold_case_folds_then_strips_accents(text: str, expected: str) -> None:
    assert fold(text) == expected
    assert fold(text) == _copy_of_the_former_helpers(text.casefold())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Corentin ?", "corentin"),
        ("Élodie, À l'Hôtel-Dieu !", "elodie a l hotel dieu"),
        ("snake_case  and\ttabs\n", "snake case and tabs"),
        ("  ?!  ", ""),
        ("Version 2.0", "version 2 0"),
    ],
)
def test_fold_plain_leaves_words_single_spaced(text: str, expected: str) -> None:
    assert fold_plain(text) == expected


def test_has_phrase_matches_whole_folded_words_only() -> None:
    assert has_phrase("C'est quoi, Kraken ?", ["c est quoi"])
    assert has_phrase("Aujourd'hui je suis là", ["aujourd hui"])
    assert not has_phrase("c'est quoiqu'il arrive", ["c est quoi"])
    assert not has_phrase("sickness", ["sick"])
