"""After the writer: a reply never says it stored something. Memory is written by the
extraction job after the reply (eko/memory/extraction.py), which may keep nothing, so "I've
noted it" / "je m'en souviendrai" / "added to my database" would claim what the reply cannot
know. A rule, no model call: each sentence holding such a phrase (storage_claims.json,
English and French) is removed; a reply made only of such sentences becomes the plain
acknowledgment of eko/prompts/writer/grounding/acknowledge_<lang>.md.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from eko.text import has_phrase

CLAIMS_FILE = Path(__file__).with_name("storage_claims.json")
# Every character falls in one piece: words, end marks, spaces, line breaks.
_SENTENCE = re.compile(r"[^.!?…\n]*[.!?…]*[ \t]*\n*")


@cache
def _claims() -> tuple[str, ...]:
    raw = json.loads(CLAIMS_FILE.read_text(encoding="utf-8"))
    return tuple(raw["claims"])


def claims_storage(sentence: str) -> bool:
    return has_phrase(sentence, _claims())


def without_storage_claims(reply: str) -> tuple[str, list[str]]:
    """(the reply without its storage-claim sentences — empty when nothing else is left —,
    the sentences removed)."""
    kept: list[str] = []
    claims: list[str] = []
    for sentence in _SENTENCE.findall(reply):
        (claims if claims_storage(sentence) else kept).append(sentence)
    if not claims:
        return reply, []
    return "".join(kept).strip(), [s.strip() for s in claims]
