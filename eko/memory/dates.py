"""Dates a message names ("on 7 July, 2023", "in August 2023", "le 3 juin 2023", "2023-06-03"):
the periods whose turns a question is about, in English and French, by rule.

A day is that day; a month with its year is that month. A bare year or a bare month is too wide
to say which turns to read and is not taken. Relative dates ("last week") are not parsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from eko.text import strip_accents

MONTHS = {
    **{
        name: number
        for number, names in enumerate(
            (
                ("january", "jan", "janvier", "janv"),
                ("february", "feb", "fevrier", "fevr"),
                ("march", "mar", "mars"),
                ("april", "apr", "avril", "avr"),
                ("may", "mai"),
                ("june", "jun", "juin"),
                ("july", "jul", "juillet", "juil"),
                ("august", "aug", "aout"),
                ("september", "sep", "sept", "septembre"),
                ("october", "oct", "octobre"),
                ("november", "nov", "novembre"),
                ("december", "dec", "decembre"),
            ),
            start=1,
        )
        for name in names
    }
}
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_DAY = r"(?:1er|[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?:19|20)\d\d"
# "13 October 2023", "3 June, 2023", "le 3 juin 2023", "1er mai 2024".
_DAY_MONTH_YEAR = re.compile(rf"\b({_DAY})\s+({_MONTH})\.?,?\s+({_YEAR})\b")
# "October 13, 2023", "June 3 2023".
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH})\.?\s+({_DAY}),?\s+({_YEAR})\b")
_ISO = re.compile(rf"\b({_YEAR})-(\d\d)-(\d\d)\b")
# "in August 2023", "en août 2023" (after the day forms have been taken out).
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+({_YEAR})\b")


@dataclass(frozen=True, slots=True)
class Period:
    start: datetime  # inclusive, UTC
    end: datetime  # exclusive, UTC
    text: str  # as the message wrote it

    def as_dict(self) -> dict[str, str]:
        return {"start": self.start.isoformat(), "end": self.end.isoformat(), "text": self.text}


def named_periods(text: str) -> list[Period]:
    """The days and months `text` names, in order of appearance, without repeats."""
    folded = strip_accents(text.lower())
    found: list[tuple[int, Period]] = []
    taken: list[tuple[int, int]] = []
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy"), (_ISO, "ymd")):
        for match in pattern.finditer(folded):
            day = _day(match, order)
            if day is not None:
                found.append((match.start(), Period(day, day + timedelta(days=1), match[0])))
                taken.append(match.span())
    for match in _MONTH_YEAR.finditer(folded):
        if any(start <= match.start() < end for start, end in taken):
            continue
        month = MONTHS[match[1]]
        start = datetime(int(match[2]), month, 1, tzinfo=UTC)
        end = datetime(start.year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
        found.append((match.start(), Period(start, end, match[0])))
    found.sort(key=lambda item: item[0])
    return list(dict.fromkeys(period for _, period in found))


def _day(match: re.Match[str], order: str) -> datetime | None:
    parts = dict(zip(order, match.groups(), strict=True))
    day = int(re.sub(r"\D", "", parts["d"]) or 0)
    month = MONTHS.get(parts["m"]) if order != "ymd" else int(parts["m"])
    try:
        return datetime(int(parts["y"]), month or 0, day, tzinfo=UTC)
    except ValueError:
        return None  # "31 February 2023", "2023-13-01": not a day
