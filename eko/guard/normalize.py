"""Question text as the memory guard sees it: normalized for the exact key, split into words
for the false-hit check.

Normalization must stay stable: the key_hash of every stored entry depends on it.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

from eko.text import strip_accents

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "`": "'", "´": "'", "ʼ": "'"})
_SPACES = re.compile(r"\s+")
# Punctuation that does not change what is asked: "How are you ?!" == "how are you".
_EDGE_PUNCTUATION = " \t\n?!.…;:,¿¡\"'«»"


def normalize_question(text: str) -> str:
    """NFKC, case-folded, one space between words, no punctuation at either end.

    Accents are kept: in French they can change the question ("ou" or, "où" where).
    """
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)
    return _SPACES.sub(" ", folded).strip(_EDGE_PUNCTUATION)


def key_hash(scope: str, question: str) -> str:
    """SHA-256 of the scope and the normalized question: the scope is part of the key."""
    payload = f"{scope}\n{normalize_question(question)}"
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def strip_mention(text: str, assistant_name: str) -> str:
    """The question without a leading or trailing address to the assistant ("Eko, …", "… @Eko").

    In a lobby the assistant only answers when named; the name is not part of the question.
    """
    name = re.escape(assistant_name)
    # Only an address: "@Eko …", "Eko, …", "… , Eko ?", "… @Eko". Not "Eko est-il libre ?" nor
    # "mon mot de passe Eko ?", where the name is part of the question.
    text = re.sub(
        rf"^\s*(?:@{name}\b[\s,:;!.-]*|{name}\s*[,:;!]\s*)", "", text, flags=re.IGNORECASE
    )
    text = re.sub(
        rf"(?:\s*[,;]\s*@?{name}|\s+@{name})\b\s*([?!.…]*)\s*$", r"\1", text, flags=re.IGNORECASE
    )
    return text.strip()


# Function and question words (English, French): never a name, never what a question is about.
_STOPWORDS_TEXT = """
    the and for are was were been being have has had having does did doing will would shall
    should can could may might must what which who whom whose when where why how that this
    these those there here with from into onto about than then them they their your you our
    its his her she him any all some each every other more most much many such only also very
    just not but out get got make best good way ways thing things one people someone anyone
    les des une est sont etre avoir fait faire pour par avec dans sur sous que qui quoi quel
    quelle quels quelles comment pourquoi quand combien mon ton son mes tes ses nos vos leur
    leurs cette ces elle ils elles nous vous pas plus tout tous toute toutes bien tres aux
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())

_WORD = re.compile(r"[^\W_]+")


def fold_words(text: str) -> list[str]:
    """Lower-case words without accents, with English "n't" and French "n'" made explicit.

    "Don't" -> ["do", "not"]; "n'est" -> ["ne", "est"]; "can't"/"cannot" -> ["can", "not"].
    """
    return list(_fold_words(text))


@lru_cache(maxsize=4096)
def _fold_words(text: str) -> tuple[str, ...]:
    """fold_words, cached: the verifier folds the same few texts many times per lookup."""
    text = unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)
    text = re.sub(r"\bcan'?t\b|\bcannot\b", "can not", text)
    text = re.sub(r"\bwon'?t\b", "will not", text)
    text = re.sub(r"n't\b", " not", text)
    text = re.sub(r"\bn'", "ne ", text)
    return tuple(_WORD.findall(strip_accents(text)))
