"""A manner question against a definite kind or against a definition (issue 36).

- **how / when, how / who**: "How do I prune a rose bush?" asks the way, "When do I prune a
  rose bush?" the moment, "Who can apply for a passport?" the people allowed. The kind rule
  (rules_words.py) lets an open *how* mix with any kind, because paraphrases swap *how* and
  *what* all the time; a *when* or *who* that opens the other question is a definite answer
  the manner does not give. Not *where*: "Where / How can I find a tutor?" were paraphrases on
  QQP dev. Not a *how* that asks how one knows ("How will you know you love someone?" / "When
  do you know you are in love?", QQP dev): that one asks a moment too.
- **definition / manner**: "What is a business plan?" asks what it is, "How do you write a
  business plan?" how it is done. The definition is a short "What is (a) X?", "What does X
  mean?", "Qu'est-ce qu'un X ?", "C'est quoi un X ?", "Que signifie X ?"; never "What is the
  best way / the process / the steps …" (a manner in other words). A *how* that asks for the
  definition ("How would you define X?", "Comment définir X ?") is one.

Pure string work on folded words (eko.guard.normalize.fold_words).
"""

from __future__ import annotations

import re

from eko.guard.normalize import fold_words


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# After "how", the words of a manner question ("How do I …", "How is X made", "How to …"), not
# a degree ("How big is …") nor a count ("How many …").
_MANNER_NEXT = _words(
    """do does did is are was were can could should would will to i you we one has have may
    might shall must am they he she it"""
)
# A "how" that asks how one knows: a moment in disguise ("How do you know when …").
_KNOWING = frozenset({"know", "knows", "savoir", "sait", "sais"})
# A "how" that asks for a definition or a description.
_DEFINING = _words(
    """define defined definition describe described explain explained mean meaning
    definir defini definit decrire expliquer explique signifie"""
)
# The definite kinds a manner does not answer, when they open the other question.
_OPENING_KINDS = {"when": "when", "quand": "when", "who": "who", "whom": "who", "qui": "who"}


def asks_manner(text: str) -> bool:
    """ "How do I …?", "How is X made?", "How to …?", "Comment …?": the way something is done."""
    words = fold_words(text)
    return any(
        word == "comment" or (word == "how" and i + 1 < len(words) and words[i + 1] in _MANNER_NEXT)
        for i, word in enumerate(words)
    )


def opening_kind(text: str) -> str | None:
    """The definite kind a question opens with: "When …" -> when, "Qui …" -> who."""
    words = fold_words(text)
    return _OPENING_KINDS.get(words[0]) if words else None


def manner_against_kind(question: str, stored: str) -> tuple[list[str], list[str]] | None:
    """One side asks how, the other opens with when / who and asks no how: ("how", kind)."""
    for asked, other, flip in ((question, stored, False), (stored, question, True)):
        kind = opening_kind(other)
        if kind is None or not asks_manner(asked) or asks_manner(other):
            continue
        words = fold_words(asked)
        if _KNOWING & set(words) or kind == opening_kind(asked):
            continue
        if kind == "when" and {"when", "quand"} & set(words):
            continue
        return ([kind], ["how"]) if flip else (["how"], [kind])
    return None


# --- definitions ---

# Words after "What is" that make it a manner, a measure or an opinion, not a definition:
# "What is the best way to …", "What is the process of …", "What's it like …".
_NOT_A_TERM = _words(
    """best way ways steps step process procedure method methods technique recipe tips trick
    secret easiest fastest quickest right proper correct simplest good better difference
    differences like it there this that your my our their his her its how to for time cost
    price pronunciation spelling opinion view views thoughts reason cause purpose use point
    meilleur meilleure meilleurs facon moyen moyens etapes methode procedure recette astuce
    secret difference prix cout je on il ca cela pour faut dois faire"""
)
_TERM = r"(?P<term>(?:\w+ ){0,3}\w+)"
_DETERMINER_FR = r"(?:un|une|le|la|les|l|des|du|de la)"
_DEFINITIONS = tuple(
    re.compile(f"^{pattern}$")
    for pattern in (
        rf"what (?:is|are|s|was) (?:(?:a|an|the) )?{_TERM}",
        rf"what (?:does|do) {_TERM} mean",
        rf"what is (?:meant by|the (?:meaning|definition) of) (?:(?:a|an|the) )?{_TERM}",
        rf"qu est ce qu(?:e)? {_DETERMINER_FR} {_TERM}",
        rf"c est quoi {_DETERMINER_FR} {_TERM}",
        rf"que (?:signifie|veut dire) (?:{_DETERMINER_FR} )?(?:mot )?{_TERM}",
        rf"quelle est la (?:definition|signification) d(?:e|u|es)? (?:{_DETERMINER_FR} )?{_TERM}",
    )
)


def asks_definition(text: str) -> bool:
    """ "What is a VPN?", "What does VPN mean?", "Qu'est-ce qu'un VPN ?": what a term is."""
    joined = " ".join(fold_words(text))
    for pattern in _DEFINITIONS:
        match = pattern.match(joined)
        if match is not None:
            return not _NOT_A_TERM & set(match.group("term").split())
    return False


def definition_against_manner(question: str, stored: str) -> tuple[list[str], list[str]] | None:
    """One side asks what X is, the other how X is done: ("definition", "how")."""
    for asked, other, flip in ((question, stored, False), (stored, question, True)):
        if not asks_definition(asked) or asks_manner(asked) or not asks_manner(other):
            continue
        if _DEFINING & set(fold_words(other)):
            continue  # "How would you define X?" asks the definition
        return (["how"], ["definition"]) if flip else (["definition"], ["how"])
    return None
