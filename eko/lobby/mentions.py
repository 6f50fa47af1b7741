"""Is the assistant named in a message? (The lobby answers only then: the seed's decision 6.)

The name must stand as a word of its own, case- and accent-insensitively: "Eko,", "@eko",
"eko ?", "EKO !", "Hé Eko", "Éko,". Words that merely start with it ("ekologie",
"Ekosystem", "eko-système") and addresses that contain it (URLs, e-mail addresses, host names
such as eko.example.com) are not mentions.
"""

from __future__ import annotations

import re
from functools import cache

from eko.config import Settings
from eko.store.models import Room
from eko.text import strip_accents

# Removed before matching: a name inside an address is never a mention.
_URL = re.compile(r"(?:\b[a-z][a-z0-9+.-]*://|\bwww\.)\S+", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def fold(text: str) -> str:
    """Casefolded, without accents: "Éko" -> "eko". One character in, at most a few out."""
    return strip_accents(text).casefold()


@cache
def _pattern(name: str) -> re.Pattern[str]:
    words = fold(name).split()
    if not words:
        raise ValueError("the persona's name is empty")
    body = r"\s+".join(re.escape(word) for word in words)
    # Not glued to a word, a path, a host or an address before it ("/eko", "x.eko", "a@eko");
    # an "@" of its own is the mention prefix. After it: not a word character, not "@" and
    # not a hyphen or dot that goes on into a word ("eko-système", "eko.example").
    return re.compile(rf"(?<![\w\-./@])@?{body}(?![\w@])(?![.\-]\w)")


def is_mentioned(text: str, name: str) -> bool:
    """True when `name` (the persona's name, e.g. "Eko") is mentioned in `text`."""
    cleaned = _EMAIL.sub(" ", _URL.sub(" ", fold(text)))
    return _pattern(name).search(cleaned) is not None


def persona_name(room: Room, settings: Settings) -> str:
    """The name people call the assistant by in `room`: the configured assistant name for the
    default persona, otherwise the room's persona name ("lisa" -> "Lisa")."""
    if not room.persona or room.persona == settings.default_persona:
        return settings.assistant_name
    return room.persona.replace("_", " ").replace("-", " ").title()
