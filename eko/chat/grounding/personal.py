"""Is a message a question about a fact of the user's own life? By rules, French and English.

Personal: a question (or "tell me …") asking what *is* about the user or the people and animals
in their life — "What instruments does my sister play?", "what's my dog's name", "ma femme
s'appelle comment ?", "où j'habite ?", "quel est mon film préféré ?".

Not personal:
- what the user owns as a tool or a piece of work — "why does my code crash?", "my computer
  is slow, what can I do?", "corrige ma lettre": the answer is in what they give, not in
  memory (the possessed noun is in the `objects` list);
- advice and tasks — "what should I get my sister for her birthday?", "écris un mot pour ma
  mère": the model may help without knowing anything (the `advice` list);
- how-to and why — "how do I reset my password", "pourquoi mon chat miaule la nuit ?" (unless
  "how old / how many …", "comment s'appelle …");
- statements ("my sister plays the cello.") — they are what memory learns from.

The detector returns the question's subject: a person (a `people` topic), else facts of life
(`life` topics), else the noun after "my" — and the words that show memory holds something
about it (memory.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from eko.chat.grounding.words import WordLists, word_lists
from eko.guard.utterance import is_question, words

# French elisions in front of a noun ("l'adresse", "d'instrument") and English "'s".
_ELISIONS = ("l'", "d'", "qu'", "j'", "m'")
# Request openers that ask to be told something ("tell me my …", "rappelle-moi où …").
_TELL_OPENERS = frozenset(
    {"tell", "remind", "dis-moi", "dites-moi", "rappelle-moi", "rappelez-moi", "sais-tu"}
)
# Greetings and the assistant's name in front of a question.
_LEADING = frozenset({"hey", "hi", "hello", "bonjour", "salut", "coucou", "eko", "dis", "dites"})
# Ligatures folding leaves alone ("sœur" must read as "soeur").
_LIGATURES = str.maketrans({"œ": "oe", "Œ": "OE", "æ": "ae", "Æ": "AE"})
# A question's own words shorter than this say nothing of its subject ("do", "the", "mes").
_MIN_OWN_WORD = 4
# How many words an adjective may put between "my" and the noun ("my little sister").
_MAX_SKIPPED = 2


@dataclass(frozen=True, slots=True)
class PersonalQuestion:
    """A question about the user's life: its subject and the words that would show it known."""

    # A topic name ("sister", "home") or the noun after "my" ("flight").
    subject: str
    # "people" (a person or an animal of their life), "life" (a fact of their life), "other".
    kind: str
    # Words whose presence in memory shows something is known of the subject (folded).
    evidence: frozenset[str]
    # The facts of life asked about the subject ("music" for "what does my sister play").
    aspects: tuple[str, ...] = ()


def text_words(text: str) -> list[str]:
    """The folded words of `text`, ligatures spelt out ("Ma sœur" -> ["ma", "soeur"])."""
    return words(text.translate(_LIGATURES))


def normalise(token: str) -> str:
    """ "sister's" -> "sister", "l'adresse" -> "adresse" (tokens are folded already)."""
    if token.endswith("'s"):
        token = token[:-2]
    for elision in _ELISIONS:
        if token.startswith(elision) and len(token) > len(elision) + 1:
            return token[len(elision) :]
    return token


def personal_question(text: str, lists: WordLists | None = None) -> PersonalQuestion | None:
    """The question's subject when `text` asks a fact of the user's life, else None."""
    lists = lists or word_lists()
    raw = text_words(text)
    tokens = [normalise(token) for token in raw]
    start = 0
    while start < len(tokens) - 1 and tokens[start] in _LEADING:
        start += 1
    tokens = tokens[start:]
    # The self phrases are matched on the words as written ("comment je m'appelle").
    joined = f" {' '.join(raw[start:])} "
    if not tokens:
        return None
    if not (is_question(text) or tokens[0] in _TELL_OPENERS):
        return None
    if any(token in lists.advice for token in tokens):
        return None
    asks_self = any(
        f" {phrase} " in joined for phrase in (*lists.self_phrases, *lists.identity_phrases)
    ) or _asks_about_self(raw[start:], lists)
    first = tokens[0]
    follower = tokens[1] if len(tokens) > 1 else ""
    if (
        first in lists.openers_not_facts
        and follower not in lists.opener_fact_followers
        and not asks_self
    ):
        return None
    people, life, others, objects = _possessed(tokens, lists)
    if asks_self and not people:
        # "do I have pets?", "est-ce que j'ai des enfants ?": the person is not after "my".
        people = [t for t in (_topic_of(token, lists.people) for token in tokens) if t]
    aspects = tuple(
        topic for topic, vocabulary in lists.life.items() if any(t in vocabulary for t in tokens)
    )
    if people:
        topic = people[0]
        return PersonalQuestion(topic, "people", lists.people[topic], aspects)
    mentions_object = objects or (asks_self and any(t in lists.objects for t in tokens))
    if mentions_object and not life and not others:
        return None  # "my code", "mon ordinateur": the answer is in what they give
    # The question's own words show it known too ("quelle voiture je conduis ?" is answered
    # by "je conduis une Clio"), with the topics' words.
    own = frozenset(
        token
        for token in tokens
        if len(token) >= _MIN_OWN_WORD
        and token not in lists.question_stopwords
        and token not in lists.possessives
    )
    if not (life or others or asks_self):
        return None
    topics = life or [topic for topic in aspects if topic != "memory"]
    if topics:
        evidence = frozenset().union(own, *(lists.life[topic] for topic in topics))
        return PersonalQuestion(topics[0], "life", evidence, aspects)
    if others:
        return PersonalQuestion(others[0], "other", own | frozenset(others), aspects)
    if any(f" {phrase} " in joined for phrase in lists.identity_phrases):
        # "qui suis-je ?", "what did I tell you?": anything known about the user answers it.
        return PersonalQuestion("self", "other", frozenset(), aspects)
    return None


def _possessed(
    tokens: list[str], lists: WordLists
) -> tuple[list[str], list[str], list[str], list[str]]:
    """The nouns after each possessive: people topics, life topics, other nouns, objects."""
    people: list[str] = []
    life: list[str] = []
    others: list[str] = []
    objects: list[str] = []
    for index, token in enumerate(tokens):
        if token not in lists.possessives:
            continue
        position = index + 1
        while (
            position < len(tokens)
            and tokens[position] in lists.skip_between
            and position - index <= _MAX_SKIPPED
        ):
            position += 1
        if position >= len(tokens):
            continue
        noun = tokens[position]
        person = _topic_of(noun, lists.people)
        fact = _topic_of(noun, lists.life)
        if person is not None:
            people.append(person)
        elif noun in lists.objects:
            objects.append(noun)
        elif fact is not None:
            life.append(fact)
        elif len(noun) > 2:
            others.append(noun)
    return people, life, others, objects


def _topic_of(word: str, topics: dict[str, frozenset[str]]) -> str | None:
    return next((topic for topic, vocabulary in topics.items() if word in vocabulary), None)


def _asks_about_self(raw: list[str], lists: WordLists) -> bool:
    """A fact question with the user as subject: "which team do I support?", "where did I
    go on holiday?", "quelle voiture je conduis ?", "à quoi suis-je allergique ?"."""
    if not raw:
        return False
    if raw[0] in lists.wh_en:
        return any(word in lists.aux_en and following == "i" for word, following in pairwise(raw))
    french = raw[1:] if raw[0] in lists.lead_fr and len(raw) > 1 else raw
    if not french or french[0] not in lists.wh_fr:
        return False
    return any(
        word in lists.subject_fr or (word.endswith("-je") and word not in lists.advice)
        for word in french
    )
