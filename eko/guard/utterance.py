"""What a message is, in French and English, by string rules: a question (or a request to be
answered), a question about the asker themself, and whether an answer repeats a fact about them.

No model, no language detection: the two languages' word lists are checked together (a message
mixing them is rare and still matches one). Used by the cache's rules (eko.guard.validation)
and by the chat engine to say whether an answer depends on the user (docs/guard.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from eko.text import fold as fold_text

_APOSTROPHES = str.maketrans({"’": "'", "`": "'", "ʼ": "'"})
_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")

# A message opening with one of these asks something ("how …", "est-ce que …", "is it …").
_QUESTION_OPENERS = frozenset(
    [
        "how",
        "what",
        "what's",
        "whats",
        "why",
        "when",
        "where",
        "who",
        "whom",
        "whose",
        "which",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "is",
        "are",
        "am",
        "was",
        "were",
        "do",
        "does",
        "did",
        "have",
        "has",
        "may",
        "might",
        "must",
        "isn't",
        "aren't",
        "don't",
        "doesn't",
        "didn't",
        "can't",
        "couldn't",
        "won't",
        "wouldn't",
        "shouldn't",
        "comment",
        "pourquoi",
        "quand",
        "ou",
        "qui",
        "que",
        "quoi",
        "quel",
        "quelle",
        "quels",
        "quelles",
        "combien",
        "lequel",
        "laquelle",
        "lesquels",
        "lesquelles",
        "est-ce",
        "qu'est-ce",
        "qu'est",
    ]
)
# A request to be answered ("explain …", "donne-moi …") is cacheable like a question.
_REQUEST_OPENERS = frozenset(
    [
        "explain",
        "tell",
        "give",
        "show",
        "list",
        "describe",
        "define",
        "compare",
        "help",
        "write",
        "translate",
        "summarize",
        "summarise",
        "recommend",
        "suggest",
        "calculate",
        "convert",
        "find",
        "explique",
        "expliquez",
        "explique-moi",
        "expliquez-moi",
        "dis",
        "dites",
        "dis-moi",
        "dites-moi",
        "donne",
        "donnez",
        "donne-moi",
        "donnez-moi",
        "montre",
        "montrez",
        "montre-moi",
        "montrez-moi",
        "liste",
        "listez",
        "decris",
        "decrivez",
        "definis",
        "definissez",
        "compare",
        "comparez",
        "aide",
        "aidez",
        "aide-moi",
        "aidez-moi",
        "ecris",
        "ecrivez",
        "traduis",
        "traduisez",
        "resume",
        "resumez",
        "recommande",
        "recommandez",
        "propose",
        "proposez",
        "conseille",
        "conseillez",
        "calcule",
        "calculez",
        "convertis",
        "trouve",
        "trouvez",
    ]
)
# "I'd like to know …", "je voudrais savoir …": a question worded as a statement.
_ASKING_PREFIXES = (
    "i want to know",
    "i would like to know",
    "i'd like to know",
    "i wonder",
    "i need to know",
    "je voudrais savoir",
    "j'aimerais savoir",
    "je veux savoir",
    "je me demande",
    "je cherche a savoir",
)
# French inversion: "peux-tu", "sais-tu", "pensez-vous", "y a-t-il", "faut-il".
_INVERSION = re.compile(r"^[a-z]+(?:-t)?-(?:je|tu|il|elle|on|nous|vous|ils|elles)$")
# A message opening with a subject pronoun tells something, unless it asks ("?").
_SUBJECTS = frozenset(
    [
        "i",
        "i'm",
        "im",
        "i've",
        "i'd",
        "i'll",
        "we",
        "we're",
        "you",
        "you're",
        "he",
        "he's",
        "she",
        "she's",
        "it",
        "it's",
        "they",
        "they're",
        "there's",
        "je",
        "tu",
        "il",
        "elle",
        "on",
        "nous",
        "vous",
        "ils",
        "elles",
        "ca",
        "cela",
        "ceci",
        "c'est",
    ]
)
# Greetings, thanks, acknowledgements: never a question, whatever the punctuation.
_SMALL_TALK = frozenset(
    [
        "hello",
        "hi",
        "hey",
        "yo",
        "thanks",
        "thank",
        "you",
        "thx",
        "ok",
        "okay",
        "k",
        "cool",
        "great",
        "nice",
        "good",
        "perfect",
        "fine",
        "sure",
        "yes",
        "no",
        "yep",
        "nope",
        "bye",
        "goodbye",
        "morning",
        "evening",
        "night",
        "lol",
        "wow",
        "alright",
        "so",
        "much",
        "very",
        "lot",
        "a",
        "bonjour",
        "bonsoir",
        "salut",
        "coucou",
        "merci",
        "beaucoup",
        "ok",
        "d'accord",
        "dac",
        "super",
        "top",
        "parfait",
        "genial",
        "cool",
        "oui",
        "non",
        "ouais",
        "bien",
        "tres",
        "bye",
        "revoir",
        "au",
        "a",
        "plus",
        "bientot",
        "bonne",
        "journee",
        "soiree",
        "nuit",
    ]
)
# The message is about its author: a first-person possessive ("my name", "mes vols"), the
# author as the topic ("about me", "sur moi") or their state ("am I", "j'ai", "suis-je"). A bare
# "I" is not enough: "how do I reset a password" is a how-to anyone may ask.
_POSSESSIVES = frozenset(
    ["my", "mine", "myself", "mon", "ma", "mes", "mien", "mienne", "miens", "miennes", "moi-meme"]
)
_HOW_TO = frozenset({"how", "comment"})
_ABOUT_ME = re.compile(
    r"\b(?:about me|know me|remember me|describe me|(?:sur|de|pour) moi|me concernant"
    r"|am i|i am|i'm|im|have i|i have|i've|did i|was i|do i have|do i need"
    r"|suis-je|je suis|ai-je|j'ai|avais-je|etais-je|j'etais|dois-je|je m'appelle)\b"
)
# Fact values too common to say that an answer used the fact ("oui", "2", "paris" is kept).
_MIN_VALUE_CHARS = 3
_GENERIC_VALUES = frozenset({"true", "false", "yes", "no", "oui", "non", "none", "null"})


def fold(text: str) -> str:
    """Lower case, accents and curly apostrophes folded: 'Où' -> 'ou', 'J’ai' -> "j'ai"."""
    return fold_text(text.translate(_APOSTROPHES))


_MENTION = re.compile(r"^\s*@\S+[\s,:;]*")


def words(text: str) -> list[str]:
    """The message's words, folded, without an address in front ("@Eko, …")."""
    return _WORD.findall(fold(_MENTION.sub("", text)))


def is_small_talk(text: str) -> bool:
    """Only greetings, thanks or acknowledgements ("merci !", "ok", "hello Eko")."""
    found = words(text)
    unknown = [w for w in found if w not in _SMALL_TALK]
    # One unknown word is allowed: the assistant's or a person's name ("merci Eko").
    return bool(found) and len(unknown) <= (1 if len(found) > 1 else 0)


def is_question(text: str) -> bool:
    """True for a question or a request to be answered (a search-like phrase such as "horaires
    d'ouverture" included); False for a statement, a greeting, a thanks or an acknowledgement
    ("je pars à Lyon demain", "I'm going to Lyon tomorrow.", "merci !", "ok", "hello")."""
    found = words(text)
    if not found or is_small_talk(text):
        return False
    if "?" in text:
        return True
    # Skip a greeting or an address in front ("bonjour, comment …", "hey Eko, what …").
    start = 0
    while start < len(found) - 1 and found[start] in _SMALL_TALK:
        start += 1
    first = found[start]
    if first in _QUESTION_OPENERS or first in _REQUEST_OPENERS or _INVERSION.match(first):
        return True
    if first == "y" and start + 1 < len(found) and _INVERSION.match(found[start + 1]):
        return True  # "y a-t-il …"
    rest = " ".join(found[start:])
    if rest.startswith(_ASKING_PREFIXES):
        return True
    # Someone telling something ("je pars …", "it's done", "Le train part à 9h.").
    if first in _SUBJECTS or re.match(r"^[jc]'", first):
        return False
    return not text.rstrip().endswith((".", "!", "…"))


def refers_to_user(text: str) -> bool:
    """The message speaks of its author: "what's my name", "quel est mon vol", "am I late".

    A how-to keeps its possessive generic: "how do I export my calendar", "comment exporter
    mon agenda" ask what anyone would ask.
    """
    found = words(text)
    start = 0
    while start < len(found) - 1 and found[start] in _SMALL_TALK:
        start += 1
    how_to = bool(found) and found[start] in _HOW_TO
    if not how_to and any(word in _POSSESSIVES for word in found):
        return True
    return _ABOUT_ME.search(" ".join(found)) is not None


def fact_values(value: Any) -> list[str]:
    """The strings a stored fact's value holds (a JSON list or object: each of its values)."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return [value]
        return [value] if isinstance(parsed, str) else fact_values(parsed)
    if isinstance(value, Mapping):
        return [text for item in value.values() for text in fact_values(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in fact_values(item)]
    if isinstance(value, bool) or value is None:
        return []
    return [str(value)]


def facts_in_answer(answer: str, facts: Mapping[str, Any]) -> list[str]:
    """The keys of the facts whose value appears in `answer` (as whole words, accents folded)."""
    padded = f" {' '.join(words(answer))} "
    used = []
    for key, value in facts.items():
        for text in fact_values(value):
            needle = " ".join(words(text))
            if len(needle) < _MIN_VALUE_CHARS or needle in _GENERIC_VALUES:
                continue
            if f" {needle} " in padded:
                used.append(key)
                break
    return used
