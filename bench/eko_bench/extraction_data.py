"""Labelled exchanges for `eko bench extract`, and the content rule that scores a stored item.

A line of the JSON lines file:
    {"id", "lang", "user_name", "previous", "user", "reply",
     "expected": [LABEL…], "acceptable": [LABEL…]}
    LABEL = {"kind": "fact"|"self"|"goal", "about": str, "words": [[alternative…], …]}
`expected` are the items a good extractor stores (recall counts them; empty = nothing worth
remembering); `acceptable` are true but optional (they count as right, not for recall).

A stored item (subject and content) matches a label when every group of its `words` has an
alternative that starts a word of the item, case and accents folded ("violoncell" matches
"Violoncelle"). The kind is not compared: a true fact filed as self-knowledge is still true.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from eko.text import fold
from eko_bench.data_errors import BenchDataError, json_lines

DATA_DIR = Path(__file__).parent / "data"
DEV_FILE = DATA_DIR / "extraction_dev.jsonl"
TEST_FILE = DATA_DIR / "extraction_heldout.jsonl"
KINDS = ("fact", "self", "goal")
_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class Label:
    kind: str
    about: str
    words: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class LabelledExchange:
    id: str
    lang: str
    user_name: str
    previous: str | None
    user: str
    reply: str
    expected: tuple[Label, ...]
    acceptable: tuple[Label, ...]


def _words(text: str) -> str:
    """Folded, punctuation as spaces, kept at its ends: an alternative "the " ends a word."""
    return _NOT_WORD.sub(" ", fold(text))


def item_matches(label: Label, subject: str, content: str) -> bool:
    text = f" {_words(subject)} {_words(content)} "
    return all(
        any(re.search(r"(?<![a-z0-9])" + re.escape(_words(alt)), text) for alt in group)
        for group in label.words
    )


def _label(path: Path, number: int, raw: object) -> Label:
    if not isinstance(raw, dict):
        raise BenchDataError(f"{path}:{number}: a label must be an object")
    kind = raw.get("kind")
    words = raw.get("words")
    if kind not in KINDS:
        raise BenchDataError(f"{path}:{number}: a label's kind must be one of {', '.join(KINDS)}")
    if (
        not isinstance(words, list)
        or not words
        or not all(
            isinstance(group, list) and group and all(isinstance(w, str) and w for w in group)
            for group in words
        )
    ):
        raise BenchDataError(f"{path}:{number}: a label's words must be non-empty lists of words")
    return Label(str(kind), str(raw.get("about", "")), tuple(tuple(g) for g in words))


def load_exchanges(path: Path) -> list[LabelledExchange]:
    exchanges: list[LabelledExchange] = []
    seen: set[str] = set()
    for number, row in json_lines(path):
        try:
            ident, user, reply = str(row["id"]), str(row["user"]), str(row["reply"])
            expected, acceptable = row.get("expected", []), row.get("acceptable", [])
        except KeyError as exc:
            raise BenchDataError(f"{path}:{number}: missing field {exc}") from exc
        if not isinstance(expected, list) or not isinstance(acceptable, list):
            raise BenchDataError(f"{path}:{number}: expected and acceptable must be lists")
        if ident in seen:
            raise BenchDataError(f"{path}:{number}: id {ident!r} appears twice")
        if not user.strip():
            raise BenchDataError(f"{path}:{number}: the user's message is empty")
        seen.add(ident)
        exchanges.append(
            LabelledExchange(
                id=ident,
                lang=str(row.get("lang", "")),
                user_name=str(row.get("user_name") or "User"),
                previous=str(row.get("previous") or "") or None,
                user=user,
                reply=reply,
                expected=tuple(_label(path, number, raw) for raw in expected),
                acceptable=tuple(_label(path, number, raw) for raw in acceptable),
            )
        )
    if not exchanges:
        raise BenchDataError(f"{path}: no exchange")
    return exchanges


def right_items(
    exchange: LabelledExchange, items: Sequence[tuple[str, str]]
) -> tuple[list[bool], list[bool]]:
    """(for each stored item: is it right; for each expected label: was it stored)."""
    labels = (*exchange.expected, *exchange.acceptable)
    right = [any(item_matches(label, s, c) for label in labels) for s, c in items]
    found = [any(item_matches(label, s, c) for s, c in items) for label in exchange.expected]
    return right, found
