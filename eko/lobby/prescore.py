"""Whether the lobby has something worth saying, decided without a model (issue 34, item 6).

A 1.5B model asked "message or pass?" passes almost always (recall 0.08 on the labelled
situations) and takes minutes on two cores. The seed's two reasons to speak can be read from
the words themselves:
- people are talking now about the subject of a curiosity (a goal) → pose it;
- someone just asked a question nobody has answered, and a stored fact names its subject →
  give the fact.
And the seed's strict threshold becomes rules that keep the assistant quiet: nothing when a
recent message is sensitive (grief, illness, a conflict), when the question went to a person
or was a request, when a person already answered it, or when someone just explained the
curiosity's subject ("Kraken FM c'est notre webradio").
The model is then asked only to write the message (eko/lobby/opportunity.py).
Measured by `eko bench proactive` (bench/eko_bench/proactive_situations.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from eko.store.message_search import query_words
from eko.text import STEM_CHARS, fold_plain, has_phrase

WORDS_FILE = Path(__file__).with_name("prescore_words.json")
# Only the last few messages are "now".
RECENT_LINES = 5
# A chat word this long that starts a subject's word is that word clipped ("kube").
CLIPPED_MIN_CHARS = 4
# A subject of several words is named by its longest word alone when it is this long.
HEAD_MIN_CHARS = 6
_ARTICLES = frozenset({"le", "la", "les", "l", "un", "une", "des", "du", "the", "a", "an"})
_POSSESSIVE = re.compile(r"['’]s\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Spoken:
    """One lobby message: who said it and what."""

    speaker: str
    text: str
    by_assistant: bool = False


@dataclass(frozen=True, slots=True)
class Known:
    """A curiosity (goal) or a fact, as memory stores it."""

    id: str
    subject: str
    content: str


@dataclass(frozen=True, slots=True)
class Prescore:
    action: Literal["message", "pass"]
    reason: str
    kind: Literal["goal", "fact"] | None = None
    item: Known | None = None
    question: Spoken | None = None  # the open question a fact answers


@cache
def _lists() -> dict[str, tuple[str, ...]]:
    """The word lists by name: sensitive, interrogative, request, copula, definition_lead,
    ignorance, agreement, pronoun_definition, definition_question, asks_time, time_words,
    not_a_message."""
    raw = json.loads(WORDS_FILE.read_text(encoding="utf-8"))
    return {name: tuple(words) for name, words in raw.items() if not name.startswith("_")}


def _starts_with(text: str, phrases: Sequence[str]) -> bool:
    folded = f"{fold_plain(text)} "
    return any(folded.startswith(f"{phrase} ") for phrase in phrases)


def _subject_words(subject: str) -> list[str]:
    words = query_words(subject)
    return words or [w for w in fold_plain(subject).split() if len(w) > 1]


def _same_word(wanted: str, said: str) -> bool:
    """`said` is `wanted`: the same word, an inflection (shared stem) or a clipped form
    ("kube" for "kubernetes", "dispo" for "disponible")."""
    if len(wanted) >= STEM_CHARS and len(said) >= STEM_CHARS:
        return wanted[:STEM_CHARS] == said[:STEM_CHARS]
    if wanted == said or wanted.rstrip("s") == said.rstrip("s"):
        return True
    return len(said) >= CLIPPED_MIN_CHARS and len(wanted) > len(said) and wanted.startswith(said)


def _head_words(subject: str) -> list[str]:
    """The words that say what the subject is: in "Hannah's new job" the job, not Hannah (a
    possessive's owner is a modifier); otherwise all of them."""
    owned = _POSSESSIVE.split(subject, maxsplit=1)
    return _subject_words(owned[1]) if len(owned) == 2 and owned[1].strip() else []


def subject_coverage(subject: str, text: str) -> tuple[int, int, bool]:
    """(subject words present in `text`, subject words, whether the subject's longest head
    word is among them)."""
    wanted = _subject_words(subject)
    present = fold_plain(text).split()
    found = [w for w in wanted if any(_same_word(w, p) for p in present)]
    longest = max(_head_words(subject) or wanted, key=len, default="")
    return len(found), len(wanted), longest in found and len(longest) >= HEAD_MIN_CHARS


def names(subject: str, text: str) -> bool:
    """Whether `text` names `subject`: each of its significant words is there, or — for a
    subject of several words — its longest one ("Lambert" for "Hélène Lambert", "hackathon"
    for "hackathon interne")."""
    found, wanted, head = subject_coverage(subject, text)
    return wanted > 0 and (found == wanted or (wanted > 1 and head))


def is_question(text: str) -> bool:
    return "?" in text or _starts_with(text, _lists()["interrogative"])


def is_sensitive(text: str) -> bool:
    return has_phrase(text, _lists()["sensitive"])


def answers(line: Spoken, previous: Spoken | None = None) -> bool:
    """Whether a reply gives an answer: not another question, not "no idea", and not "same"
    right after a "no idea" (`previous`)."""
    lists = _lists()
    if is_question(line.text) or has_phrase(line.text, lists["ignorance"]):
        return False
    return not (
        previous is not None
        and has_phrase(previous.text, lists["ignorance"])
        and _starts_with(line.text, lists["agreement"])
    )


def asks_someone(line: Spoken, speakers: set[str]) -> bool:
    """A request ("tu peux relire ma PR ?") or a question put to one person ("David, …",
    "@Lucie …"): not a question for the room's memory."""
    text = line.text.strip()
    if "@" in text or has_phrase(text, _lists()["request"]):
        return True
    head = text.split(",", 1)[0].strip()
    return "," in text and fold_plain(head) in {fold_plain(s) for s in speakers if s}


def _defines(subject: str, line: Spoken) -> bool:
    """ "Kraken FM c'est notre webradio", "for those asking: Ralph is…"."""
    lists = _lists()
    tokens = fold_plain(line.text).split()
    last = _subject_words(subject)[-1:] or [""]
    for index, token in enumerate(tokens):
        if not _same_word(last[0], token):
            continue
        after = " ".join(tokens[index + 1 : index + 5]) + " "
        if any(after.startswith(f"{copula} ") for copula in lists["copula"]):
            return True
        if has_phrase(line.text, lists["definition_lead"]):
            return True
    return False


def explained(subject: str, lines: Sequence[Spoken]) -> bool:
    """A person already said what the subject is: a line defining it by name, or a reply
    that defines it by a pronoun ("c'est le nouveau designer", "un logiciel de compta")
    right after a question naming it."""
    for index, line in enumerate(lines):
        if is_question(line.text) or not names(subject, " ".join(_around(lines, index))):
            continue
        if _defines(subject, line):
            return True
        previous = lines[index - 1] if index else None
        if (
            previous is not None
            and previous.speaker != line.speaker
            and is_question(previous.text)
            and names(subject, previous.text)
            and (
                has_phrase(line.text, _lists()["pronoun_definition"])
                # "what's hollis farm" → "pick your own strawberry place…": the answer to
                # a question asking what the subject is, by someone else, is its definition.
                or (_asks_what(subject, previous.text) and answers(line))
            )
        ):
            return True
    return False


def _asks_what(subject: str, text: str) -> bool:
    """ "what's hollis farm", "c qui gaspard ?": a question asking what the subject itself is
    (not "c'était quoi le problème avec WebRTC ?")."""
    tokens = fold_plain(text).split()
    first = (_subject_words(subject) or [""])[0]
    for phrase in _lists()["definition_question"]:
        size = len(phrase.split())
        for index in range(len(tokens) - size):
            if " ".join(tokens[index : index + size]) != phrase:
                continue
            rest = [t for t in tokens[index + size : index + size + 3] if t not in _ARTICLES]
            if rest and _same_word(first, rest[0]):
                return True
    return False


def _around(lines: Sequence[Spoken], index: int) -> list[str]:
    return [line.text for line in lines[max(0, index - 1) : index + 1]]


def open_questions(lines: Sequence[Spoken]) -> list[Spoken]:
    """Questions a person asked that no other person has answered since ("no idea" and
    another question are not answers), most recent first; requests and questions put to
    one person are left out."""
    speakers = {line.speaker for line in lines}
    found = []
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if not is_question(line.text) or asks_someone(line, speakers):
            continue
        later = lines[index + 1 :]
        if any(
            other.speaker != line.speaker and answers(other, lines[index + offset])
            for offset, other in enumerate(later)
        ):
            continue
        found.append(line)
    return found


def _overlap(a: str, b: str) -> int:
    words_b = query_words(b)
    return sum(any(_same_word(w, x) for x in words_b) for w in query_words(a))


def gives_time(text: str) -> bool:
    return any(c.isdigit() for c in text) or has_phrase(text, _lists()["time_words"])


def fits(question: str, fact: str) -> bool:
    """A question about when ("à quelle heure ?", "when is it?") needs a fact that says when."""
    return gives_time(fact) or not has_phrase(question, _lists()["asks_time"])


def fact_answering(
    question: Spoken,
    after: Sequence[Spoken],
    facts: Sequence[Known],
    before: Spoken | None = None,
) -> Known | None:
    """The fact that answers `question`: it names the question's subject, or shares two
    words with the question and what was said after it. `before`: the line the same person
    said right before the question, which the question may refer back to ("j'ai mis le gâteau
    de tata odile au four" → "vous savez cb de temps faut le laisser ?")."""
    asked = question.text if before is None else f"{before.text} {question.text}"
    talk = " ".join([asked, *(line.text for line in after)])
    scored = []
    for fact in facts:
        if not fits(question.text, fact.content):
            continue
        if names(fact.subject, asked):
            scored.append((1 + _overlap(fact.content, talk), fact))
            continue
        found, _wanted, _head = subject_coverage(fact.subject, asked)
        # Without a subject word, the question must name what the fact says, by itself ("who
        # handles the badges now that gégé left?" for a fact filed under "Gérald Mercier").
        shared = found + _overlap(fact.content, talk) if found else _overlap(fact.content, asked)
        if shared >= 2:
            scored.append((shared, fact))
    return max(scored, key=lambda pair: pair[0])[1] if scored else None


def people_now(lines: Sequence[Spoken]) -> list[Spoken]:
    """What people said since the assistant last spoke: the last RECENT_LINES messages."""
    since = max((i for i, line in enumerate(lines) if line.by_assistant), default=-1)
    return list(lines[since + 1 :])[-RECENT_LINES:]


def prescore(
    lines: Sequence[Spoken], *, goals: Sequence[Known], facts: Sequence[Known]
) -> Prescore:
    """`lines`: the lobby's recent messages, oldest first; `goals`: open curiosities, most
    recent first; `facts`: facts the lobby may read (those found around
    open_questions(people_now(lines)))."""
    people = people_now(lines)
    if not people:
        return Prescore("pass", "nobody has spoken since the assistant")
    if any(is_sensitive(line.text) for line in people):
        return Prescore("pass", "a sensitive moment: the assistant keeps quiet")
    for question in open_questions(people):
        at = people.index(question)
        before = people[at - 1] if at and people[at - 1].speaker == question.speaker else None
        fact = fact_answering(question, people[at + 1 :], facts, before)
        if fact is not None:
            return Prescore(
                "message", "a stored fact answers an open question", "fact", fact, question
            )
    for goal in goals:
        if not any(names(goal.subject, line.text) for line in people):
            continue
        if explained(goal.subject, people):
            continue
        return Prescore("message", "people are talking about a curiosity's subject", "goal", goal)
    return Prescore("pass", "no curiosity's subject is being discussed and no open question")


def says_it(score: Prescore, message: str) -> bool:
    """Whether a written message does what the rules decided: it poses the curiosity (names
    its subject, and is a question when the curiosity is one) or gives the fact (at least
    half of its words); never an apology or the assistant introducing itself."""
    item = score.item
    if item is None or not message.strip() or has_phrase(message, _lists()["not_a_message"]):
        return False
    if score.kind == "goal":
        return names(item.subject, message) and (
            is_question(message) or not is_question(item.content)
        )
    wanted = len(query_words(item.content))
    return _overlap(item.content, message) * 2 >= max(1, wanted)
