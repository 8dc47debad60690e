"""The recency–stationarity taxonomy of RecencyQA as typed, ordered values.

It lives with the dataset, the lower layer: the recency lens and the dataset loader
both use it, and the loader must not import the lens.

Recency classes are ordered from most volatile (``AN_HOUR``, index 0) to most
stable (``NEVER``, index 11); the order is what "tolerant" (±1 class) metrics
use. Label strings are parsed leniently: case, spaces, hyphens, underscores
and a missing leading article are all accepted ("a few days", "A-Few-Days",
"few days", "A_FEW_DAYS").
"""

from __future__ import annotations

import enum
import re


class RecencyClass(enum.IntEnum):
    AN_HOUR = 0
    A_FEW_HOURS = 1
    A_DAY = 2
    A_FEW_DAYS = 3
    A_WEEK = 4
    A_FEW_WEEKS = 5
    A_MONTH = 6
    A_FEW_MONTHS = 7
    A_YEAR = 8
    A_FEW_YEARS = 9
    MANY_YEARS = 10
    NEVER = 11

    @property
    def label(self) -> str:
        """The dataset's spelling, e.g. ``A-Few-Days``."""
        return _LABELS[self]

    @property
    def index(self) -> int:
        return int(self)

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]

    def __str__(self) -> str:
        return self.label

    @classmethod
    def parse(cls, text: str) -> RecencyClass:
        """Parse one label string; raises ValueError when it is not a class."""
        found = parse_label(text)
        if found is None:
            raise ValueError(f"not a recency class: {text!r}")
        return found


_LABELS: dict[RecencyClass, str] = {
    RecencyClass.AN_HOUR: "An-Hour",
    RecencyClass.A_FEW_HOURS: "A-Few-Hours",
    RecencyClass.A_DAY: "A-Day",
    RecencyClass.A_FEW_DAYS: "A-Few-Days",
    RecencyClass.A_WEEK: "A-Week",
    RecencyClass.A_FEW_WEEKS: "A-Few-Weeks",
    RecencyClass.A_MONTH: "A-Month",
    RecencyClass.A_FEW_MONTHS: "A-Few-Months",
    RecencyClass.A_YEAR: "A-Year",
    RecencyClass.A_FEW_YEARS: "A-Few-Years",
    RecencyClass.MANY_YEARS: "Many-Years",
    RecencyClass.NEVER: "Never",
}

_DESCRIPTIONS: dict[RecencyClass, str] = {
    RecencyClass.AN_HOUR: "within an hour",
    RecencyClass.A_FEW_HOURS: "within a few hours",
    RecencyClass.A_DAY: "within a day",
    RecencyClass.A_FEW_DAYS: "within a few days",
    RecencyClass.A_WEEK: "within a week",
    RecencyClass.A_FEW_WEEKS: "within a few weeks",
    RecencyClass.A_MONTH: "within a month",
    RecencyClass.A_FEW_MONTHS: "within a few months",
    RecencyClass.A_YEAR: "within a year",
    RecencyClass.A_FEW_YEARS: "within a few years",
    RecencyClass.MANY_YEARS: "only after many years",
    RecencyClass.NEVER: "is not expected to ever change",
}

CLASSES: tuple[RecencyClass, ...] = tuple(RecencyClass)
LABELS: tuple[str, ...] = tuple(c.label for c in CLASSES)
LABEL_LIST_TEXT = ", ".join(LABELS)
"""The comma-separated list every prompt shows."""


def normalise(text: str) -> str:
    """Lower case, hyphens/underscores to spaces, single spaces, no surrounding punctuation."""
    text = re.sub(r"[-_\u2010-\u2014]+", " ", text.lower())
    text = re.sub(r"\s+", " ", text)
    return text.strip(" \t\n\"'`*.,:;!?()[]{}<>")


def _aliases() -> dict[str, RecencyClass]:
    table: dict[str, RecencyClass] = {}
    for cls in CLASSES:
        name = normalise(cls.label)  # "a few days", "an hour", "many years", "never"
        table[name] = cls
        table[name.replace(" ", "")] = cls  # "afewdays" (CamelCase squashed)
        for article in ("a ", "an "):
            if name.startswith(article):
                table[name.removeprefix(article)] = cls  # "few days", "hour", "day"
    table.update(
        {
            "one hour": RecencyClass.AN_HOUR,
            "1 hour": RecencyClass.AN_HOUR,
            "one day": RecencyClass.A_DAY,
            "one week": RecencyClass.A_WEEK,
            "one month": RecencyClass.A_MONTH,
            "one year": RecencyClass.A_YEAR,
            "a few hour": RecencyClass.A_FEW_HOURS,
            "few hour": RecencyClass.A_FEW_HOURS,
            "a hour": RecencyClass.AN_HOUR,
            "many year": RecencyClass.MANY_YEARS,
        }
    )
    return table


ALIASES: dict[str, RecencyClass] = _aliases()


def parse_label(text: str | None) -> RecencyClass | None:
    """The class a short label string names, or None. Lenient about spelling, strict about content."""
    if text is None:
        return None
    key = normalise(str(text))
    if key.startswith("within "):
        key = key.removeprefix("within ")
    return ALIASES.get(key) or ALIASES.get(key.replace(" ", ""))


class Stationarity(enum.StrEnum):
    STATIONARY = "Stationary"
    NON_STATIONARY = "Non-Stationary"

    @classmethod
    def parse(cls, text: str | bool | None) -> Stationarity | None:
        """Accepts the dataset spellings and the YES/NO of the stationarity prompt."""
        if isinstance(text, Stationarity):
            return text
        if isinstance(text, bool):
            return cls.STATIONARY if text else cls.NON_STATIONARY
        if text is None:
            return None
        key = normalise(str(text)).replace(" ", "")
        if key in {"stationary", "yes", "true", "s"}:
            return cls.STATIONARY
        if key in {"nonstationary", "no", "false", "notstationary", "ns"}:
            return cls.NON_STATIONARY
        return None
