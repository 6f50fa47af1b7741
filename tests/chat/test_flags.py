"""Internal flags never reach stored text, wherever and however the model writes them."""

from __future__ import annotations

import pytest

from eko.chat.engine.flags import contains_flag_text, strip_flags

CASES = [
    ("Super, on avance !\naha_moment=true", "Super, on avance !", {"aha_moment": True}),
    (
        "Bien.\n\naha_moment=true\nonboarding_abort=true",
        "Bien.",
        {"aha_moment": True, "onboarding_abort": True},
    ),
    ("Top  AHA_MOMENT : TRUE  et voilà", "Top et voilà", {"aha_moment": True}),
    ("Début [aha_moment = true] fin", "Début fin", {"aha_moment": True}),
    ("Ok `onboarding_abort=true`.", "Ok.", {"onboarding_abort": True}),
    (
        "Merci aha_moment= true, onboarding_abort =false",
        "Merci",
        {"aha_moment": True, "onboarding_abort": False},
    ),
    ('Voilà {aha_moment: "true"} ensuite', "Voilà ensuite", {"aha_moment": True}),
    ("Voilà, aha_moment=true.", "Voilà.", {"aha_moment": True}),
    ("Ligne un\naha_moment=true suite\n\n\nfin", "Ligne un\nsuite\n\nfin", {"aha_moment": True}),
    ("Fin coupée aha_mom", "Fin coupée", {}),
    ("Fin coupée onboarding_abort=tr", "Fin coupée", {}),
    ("Nom nu [aha_moment] ici", "Nom nu ici", {}),
    ("aha moment = true", "", {"aha_moment": True}),
    ("Tiret — aha-moment=TRUE", "Tiret", {"aha_moment": True}),
]


@pytest.mark.parametrize(("raw", "clean", "flags"), CASES)
def test_flags_are_stripped_and_kept(raw: str, clean: str, flags: dict[str, bool]) -> None:
    text, found = strip_flags(raw)
    assert text == clean
    assert found == flags
    assert not contains_flag_text(text)


@pytest.mark.parametrize(
    "prose",
    [
        "That was an aha moment for me.",
        "Pourquoi ? Parce que. Tu vois : c'est simple !",
        "Une liste :\n- un\n- deux",
    ],
)
def test_prose_without_flags_is_untouched(prose: str) -> None:
    assert strip_flags(prose) == (prose, {})
