"""Dialogs for `eko bench language`, and how a reply is scored: its language and echoes.

The set (bench/eko_bench/data/language_dialogs.jsonl) is one JSON object per line:
{"id", "turns": [{"text", "lang": "fr" | "en"}, …]}: the user's messages of one direct
conversation, each with the language its reply must be in. Most dialogs switch language
between two messages, the case where a small model follows the history instead.

A reply's language is read by the same function-word detector the server uses
(eko/guard/language.py): "und" (no clear signal, e.g. "Miso.") counts as not right. A reply
*echoes* when it holds, word for word after normalising, a sentence of four words or more
that the user wrote in the dialog: what a small model does when it has nothing to add.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from eko.guard.language import Language, detect_language
from eko_bench.data_errors import BenchDataError, json_lines
from eko_bench.llm_quality import normalise

DEFAULT_DIALOGS_FILE = Path(__file__).parent / "data" / "language_dialogs.jsonl"
ECHO_MIN_WORDS = 4
Split = Literal["all", "dev", "test"]
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")


@dataclass(frozen=True, slots=True)
class UserTurn:
    text: str
    lang: Language


@dataclass(frozen=True, slots=True)
class Dialog:
    id: str
    turns: tuple[UserTurn, ...]


def load_dialogs(path: Path = DEFAULT_DIALOGS_FILE) -> list[Dialog]:
    dialogs = []
    for number, raw in json_lines(path):
        try:
            turns = tuple(_turn(item) for item in raw["turns"])
            dialog = Dialog(id=str(raw["id"]), turns=turns)
        except (ValueError, KeyError, TypeError) as exc:
            raise BenchDataError(f"{path}:{number}: not a dialog line ({exc})") from exc
        if not dialog.turns:
            raise BenchDataError(f"{path}:{number}: {dialog.id} has no turn")
        dialogs.append(dialog)
    if not dialogs:
        raise BenchDataError(f"{path}: no dialog")
    return dialogs


def _turn(raw: dict[str, object]) -> UserTurn:
    lang = raw["lang"]
    if lang not in ("fr", "en"):
        raise ValueError(f"lang must be 'fr' or 'en', not {lang!r}")
    text = raw["text"]
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a turn needs a non-empty text")
    return UserTurn(text=text, lang=lang)


def select_split(dialogs: Sequence[Dialog], split: Split) -> list[Dialog]:
    """dev / test: half each, by a stable hash of the dialog id (wording was tuned on dev)."""
    if split == "all":
        return list(dialogs)
    wanted = 0 if split == "dev" else 1
    return [d for d in dialogs if hashlib.sha256(d.id.encode()).digest()[0] % 2 == wanted]


def reply_language(reply: str) -> Language:
    return detect_language(reply)


def echoes(reply: str, user_texts: Sequence[str]) -> bool:
    """True when the reply holds one of the user's sentences (4+ words) word for word."""
    said = f" {normalise(reply)} "
    for text in user_texts:
        for sentence in _SENTENCE_END.split(text):
            words = normalise(sentence)
            if len(words.split()) >= ECHO_MIN_WORDS and f" {words} " in said:
                return True
    return False


def first_language_baseline(dialog: Dialog) -> list[bool]:
    """A reply always in the dialog's first language: right until the user switches."""
    first = dialog.turns[0].lang
    return [turn.lang == first for turn in dialog.turns]
