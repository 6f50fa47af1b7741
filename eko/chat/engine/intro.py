"""Smalltalk intro: turn the user's answer to the target key into a user fact, deterministically.

During the intro the assistant asks for one missing required fact at a time (the target key,
stored in the assistant message's metadata). The next user message is read as the answer when
it looks like one: a name, a yes/no on "tu", a city, an activity. Anything that looks like a
question or a task is not an answer (the orchestrator then usually leaves the intro anyway).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

_GREETING = re.compile(
    r"^(?:salut|bonjour|bonsoir|coucou|hello|hi|hey|yo)\b[\s,!.:;-]*", re.IGNORECASE
)
_PREFIXES: dict[str, tuple[str, ...]] = {
    "first_name": (
        "je m'appelle",
        "je m’appelle",
        "moi c'est",
        "moi c’est",
        "mon prénom est",
        "mon prenom est",
        "mon prénom c'est",
        "mon prenom c'est",
        "appelle-moi",
        "tu peux m'appeler",
        "vous pouvez m'appeler",
        "c'est",
        "my name is",
        "call me",
        "i'm",
        "i am",
        "it's",
        "je suis",
    ),
    "main_city": (
        "j'habite à",
        "j'habite a",
        "j’habite à",
        "j'habite",
        "je vis à",
        "je vis a",
        "je vis",
        "je suis à",
        "je suis a",
        "je suis basé à",
        "je suis basée à",
        "je viens de",
        "i live in",
        "i'm in",
        "i am in",
        "i'm from",
        "i am from",
        "based in",
        "à",
        "a",
        "in",
    ),
    "main_activity": (
        "je suis",
        "je travaille comme",
        "je travaille dans",
        "je travaille en",
        "je travaille",
        "je bosse comme",
        "je bosse dans",
        "je bosse",
        "mon métier c'est",
        "mon métier est",
        "je fais",
        "i'm a",
        "i'm an",
        "i am a",
        "i am an",
        "i work as a",
        "i work as an",
        "i work as",
        "i work in",
        "i'm",
        "i am",
        "c'est",
    ),
}
_NOT_AN_ANSWER = {
    "ok",
    "oui",
    "non",
    "yes",
    "no",
    "merci",
    "thanks",
    "vas-y",
    "nickel",
    "d'accord",
    "top",
}
_NAME_WORD = re.compile(r"^[^\W\d_]+(?:[-'’][^\W\d_]+)*$")
_MAX_WORDS = {"first_name": 3, "main_city": 4, "main_activity": 12}


@dataclass(frozen=True, slots=True)
class IntroAnswer:
    fact_key: str
    value: Any
    value_type: str
    confidence: float


def parse_intro_answer(fact_key: str, text: str) -> IntroAnswer | None:
    """The fact value in `text`, if it reads as an answer to `fact_key`; else None."""
    body = unicodedata.normalize("NFC", text).strip()
    if not body or "?" in body or len(body) > 200:
        return None
    if fact_key == "use_tu_form":
        value = _tu_form(body)
        return None if value is None else IntroAnswer(fact_key, value, "boolean", 0.9)
    body = _GREETING.sub("", body).strip()
    body = _strip_prefix(body, _PREFIXES.get(fact_key, ()))
    body = body.strip(" \t.!,;:…\"'«»").strip()
    if not body or body.lower() in _NOT_AN_ANSWER:
        return None
    words = body.split()
    if len(words) > _MAX_WORDS.get(fact_key, 12):
        return None
    if fact_key == "first_name":
        first = words[0].strip(".,!;:")
        if not _NAME_WORD.match(first):
            return None
        return IntroAnswer(fact_key, _title(first), "string", 0.9)
    if fact_key == "main_city":
        if not all(_NAME_WORD.match(word.strip(".,")) for word in words):
            return None
        return IntroAnswer(fact_key, " ".join(_title(w.strip(".,")) for w in words), "string", 0.9)
    if fact_key == "main_activity":
        return IntroAnswer(fact_key, body[:120], "string", 0.8)
    return None


def _strip_prefix(body: str, prefixes: tuple[str, ...]) -> str:
    lowered = body.lower()
    for prefix in sorted(prefixes, key=len, reverse=True):
        if lowered.startswith(prefix) and (
            len(lowered) == len(prefix) or not lowered[len(prefix)].isalnum()
        ):
            return body[len(prefix) :].lstrip(" ,:-")
    return body


def _title(word: str) -> str:
    return "-".join(part[:1].upper() + part[1:].lower() for part in word.split("-"))


def _tu_form(body: str) -> bool | None:
    lowered = body.lower()
    words = set(re.findall(r"[\w'-]+", lowered))
    if "tutoi" in lowered or "tutoy" in lowered:
        return True
    if "vouvoi" in lowered or "vouvoy" in lowered:
        return False
    if "tu" in words:
        return True
    if "vous" in words:
        return False
    if words & {"oui", "yes", "ok", "okay", "volontiers", "carrément", "sure", "yep", "ouais"}:
        return True
    if words & {"non", "no", "nope"}:
        return False
    return None
