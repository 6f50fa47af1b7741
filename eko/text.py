"""Folding text for comparison: accents, case, punctuation. The one home of these rules.

Every layer uses them (store's message search, the hashing embedder, the guard's rules,
memory keys, the lobby's mentions, the chain's classifier, the benches), so this module
imports nothing from eko and sits below them all.

    strip_accents("Où était-il ?")  -> "Ou etait-il ?"   (NFKD, combining marks dropped)
    fold("Où ÉTAIT-il ?")           -> "ou etait-il ?"   (case-folded, then strip_accents)
    fold_plain("Élodie, À l'Hôtel") -> "elodie a l hotel" (fold, non-word runs as one space)

NFKD also decomposes compatibility forms ("ﬁ" -> "fi", "²" -> "2"). Case first or accents
first differ only for rare letters whose compatibility form is upper case ("ᴬ"): callers that
fold both sides of a comparison with the same function are consistent either way.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

__all__ = ["STEM_CHARS", "fold", "fold_plain", "has_phrase", "strip_accents"]

# Words sharing this many first letters are read as one word by the rules that compare words
# ("allergique" / "allergie", "réunions" / "réunion"): the extraction filter, the lobby's
# pre-score.
STEM_CHARS = 5

_NOT_WORD = re.compile(r"[\W_]+")


def strip_accents(text: str) -> str:
    """`text` in NFKD without its combining marks: "Été" -> "Ete". Case is kept."""
    if text.isascii():  # NFKD leaves ASCII as it is, and it has no combining marks
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def fold(text: str) -> str:
    """Case-folded, without accents: "Été" -> "ete", "Straße" -> "strasse"."""
    return strip_accents(text.casefold())


def fold_plain(text: str) -> str:
    """fold, with every run of punctuation, spaces and underscores as one space, trimmed:
    "Corentin ?" -> "corentin", "Hôtel-Dieu_2" -> "hotel dieu 2"."""
    return _NOT_WORD.sub(" ", fold(text)).strip()


def has_phrase(text: str, phrases: Iterable[str]) -> bool:
    """Whether `text`, folded plain, holds one of `phrases` (written folded plain: "aujourd
    hui", "c est quoi") as whole words."""
    padded = f" {fold_plain(text)} "
    return any(f" {phrase} " in padded for phrase in phrases)
