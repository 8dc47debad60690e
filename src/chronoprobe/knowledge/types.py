"""Typed facts and their time-qualified answers.

A :class:`Fact` is one (subject, property) question, e.g. (Italy, head of
state). Its :class:`Statement` list holds every non-deprecated Wikidata value
with the validity qualifiers start (P580), end (P582) and point in time (P585).
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

QID_RE = re.compile(r"^Q[1-9][0-9]{0,11}$")
PID_RE = re.compile(r"^P[1-9][0-9]{0,7}$")

DyknowCategory = Literal["countries_byGDP", "athletes_byPayment", "companies_byRevenue", "organizations"]
"""DyKnow's four categories (its file and the editing datasets know only these)."""
Category = DyknowCategory  # the older name, kept for imports from before catalogues could name their own
CATEGORY_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
"""A catalogue category: DyKnow's names, or a built catalogue's (a template's ``category``)."""


YEAR = 9
"""Wikidata's precision of a year; 10 is a month, 11 a day, 8 a decade, 7 a century, 6 a millennium ... 0 a
billion years."""
_UNITS = {8: "decade", 7: "century", 6: "millennium"}
Day = tuple[int, int, int]
"""(year, month, day) on the proleptic calendar, year 0 and negative years included: what sorts dates."""


def _days_in(year: int, month: int) -> int:
    proxy = year if 1 <= year <= 9999 else (2000 if year % 4 == 0 and (year % 100 or year % 400 == 0) else 2001)
    return calendar.monthrange(proxy, month)[1]


def _year_text(year: int) -> str:
    return f"-{-year:04d}" if year < 0 else f"{year:04d}"


class WikidataDate(BaseModel):
    """A Wikidata time value with its precision; unknown month/day are None.

    Years are as WDQS gives them (XSD 1.1, astronomical numbering: 0 is 1 BCE, -43 is 44 BCE).
    A precision coarser than a year (decade, century, ...) is kept in ``precision``: the date then
    covers a span of years (see :meth:`years`).
    """

    model_config = ConfigDict(frozen=True)

    year: int
    month: int | None = None
    day: int | None = None
    precision: int | None = Field(None, ge=0, le=YEAR - 1)
    """Set only when coarser than a year (8 decade, 7 century, 6 millennium, ... 0 a billion years)."""

    @model_validator(mode="after")
    def _a_real_day(self) -> WikidataDate:
        if self.month is not None and not 1 <= self.month <= 12:
            raise ValueError(f"month {self.month} is not a month")
        if self.day is not None and (self.month is None or not 1 <= self.day <= _days_in(self.year, self.month)):
            raise ValueError(f"day {self.day} is not a day of {_year_text(self.year)}-{self.month or 0:02d}")
        if self.precision is not None and (self.month is not None or self.day is not None):
            raise ValueError(f"a date of precision {self.precision} (coarser than a year) has no month or day")
        return self

    @classmethod
    def parse(cls, value: str) -> WikidataDate:
        """Parse ``+YYYY-MM-DDT00:00:00Z`` (Wikidata's form; ``-00`` means unknown)."""
        match = re.fullmatch(r"([+-]?)(\d{1,16})-(\d{2})-(\d{2})(?:T.*)?", value.strip())
        if not match:
            raise ValueError(f"not a Wikidata date: {value!r}")
        sign, year, month, day = match.groups()
        y = int(year) * (-1 if sign == "-" else 1)
        m = int(month) or None
        d = int(day) or None if m else None
        try:
            return cls(year=y, month=m, day=d)
        except ValidationError as exc:
            reason = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
            raise ValueError(f"not a Wikidata date: {value!r} ({reason})") from None

    def coarsened(self, precision: int) -> WikidataDate:
        """This date at Wikidata ``precision`` (11 day, 10 month, 9 year, coarser: a span of years)."""
        if precision >= 11:
            return self
        if precision == 10:
            return WikidataDate(year=self.year, month=self.month)
        return WikidataDate(year=self.year, precision=precision if precision < YEAR else None)

    def years(self) -> tuple[int, int]:
        """The first and last year this date could mean.

        A decade is its ten years (1990: 1990-1999); a century and a millennium count as Wikidata
        shows them (1900 at century precision is the 19th century, 1801-1900); coarser units are
        the span the year falls in (rounded down).
        """
        if self.precision is None:
            return self.year, self.year
        unit = 10 ** (YEAR - self.precision)
        ordinal = self.precision in (7, 6)  # the 19th century is 1801-1900
        first = (self.year - 1) // unit * unit + 1 if ordinal else self.year // unit * unit
        return first, first + unit - 1

    def first_day(self) -> Day:
        return self.years()[0], self.month or 1, self.day or 1

    def last_day(self) -> Day:
        last = self.years()[1]
        if self.month is None:
            return last, 12, 31
        return last, self.month, self.day or _days_in(last, self.month)

    def earliest(self) -> dt.date:
        """The first day this (possibly imprecise) date could mean, within years 1 to 9999."""
        return _calendar_day(self.first_day())

    def latest(self) -> dt.date:
        """The last day this (possibly imprecise) date could mean, within years 1 to 9999."""
        return _calendar_day(self.last_day())

    def wikidata(self) -> str:
        sign = "-" if self.year < 0 else "+"
        return f"{sign}{abs(self.year):04d}-{self.month or 0:02d}-{self.day or 0:02d}T00:00:00Z"

    def __str__(self) -> str:
        if self.precision is not None:
            first, last = self.years()
            return f"{_year_text(first)}/{_year_text(last)}"
        if self.month is None:
            return _year_text(self.year)
        if self.day is None:
            return f"{_year_text(self.year)}-{self.month:02d}"
        return f"{_year_text(self.year)}-{self.month:02d}-{self.day:02d}"


def _calendar_day(day: Day) -> dt.date:
    """``day`` as a :class:`datetime.date`; a year before 1 is 0001-01-01, one after 9999 is 9999-12-31."""
    year, month, number = day
    if year < dt.MINYEAR:
        return dt.date.min
    if year > dt.MAXYEAR:
        return dt.date.max
    return dt.date(year, month, number)


class Statement(BaseModel):
    """One value of a fact with its validity period."""

    model_config = ConfigDict(frozen=True)

    label: str
    qid: str | None = None
    aliases: tuple[str, ...] = ()
    start: WikidataDate | None = None
    end: WikidataDate | None = None
    end_unknown: bool | None = None
    """True: the statement ended on a day Wikidata does not know (an end qualifier of "unknown
    value"); only ever set without an ``end`` date. Unset: ``end`` says it all (None: no end)."""
    point_in_time: WikidataDate | None = None
    rank: Literal["preferred", "normal", "deprecated"] = "normal"
    """Deprecated statements come back only from a catalogue template that asks to keep them."""
    statement_id: str | None = None
    """Wikidata statement id (``Q38-...``) when retrieved live; None for the DyKnow file."""

    @field_validator("label")
    @classmethod
    def _label_not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("empty label")
        return value

    @model_validator(mode="after")
    def _one_kind_of_end(self) -> Statement:
        if self.end_unknown and self.end is not None:
            raise ValueError("end_unknown is set beside an end date")
        return self

    @property
    def has_end(self) -> bool:
        """It ended: an end date, or an end of "unknown value"."""
        return self.end is not None or bool(self.end_unknown)

    def ended_by(self, when: dt.date | None) -> bool:
        """Whether the statement had ended by ``when`` (the day its snapshot describes).

        An end of "unknown value" has (the snapshot says it ended); an end date has when its
        earliest possible day is on or before ``when`` (an end of 2023 on 2023-12-18 has; a
        scheduled end after ``when`` has not yet). ``when`` None: any end counts, the original
        DyKnow reading.
        """
        if self.end_unknown:
            return True
        if self.end is None:
            return False
        return when is None or self.end.earliest() <= when

    def current_on(self, when: dt.date | None) -> bool:
        """Has a start and had not ended by ``when`` (the paper's 'up-to-date' answer on its snapshot's day)."""
        return self.start is not None and not self.ended_by(when)

    def valid_at(self, when: dt.date, retrieved: dt.date | None = None) -> bool:
        """True if this value may have held at ``when`` (a point-in-time value is not an end date).

        An end of "unknown value" lies somewhere between the start and the snapshot's day
        ``retrieved``: the value may have held on any earlier day, not on that day or later (nor
        anywhere when the snapshot's day is not known).
        """
        if self.start is None or self.start.earliest() > when:
            return False
        if self.end_unknown:
            return retrieved is not None and when < retrieved
        return self.end is None or self.end.latest() >= when

    @property
    def is_current(self) -> bool:
        """Open-ended: has a start and no end of any kind (the original reading of 'up-to-date')."""
        return self.current_on(None)

    def span(self) -> str:
        """The validity period in words: ``start - end`` (``?`` and ``now`` for open ends), with any point in time."""
        start = str(self.start) if self.start else "?"
        end = str(self.end) if self.end else "?" if self.end_unknown else "now"
        span = f"{start} - {end}"
        if self.point_in_time:
            span += f" (at {self.point_in_time})"
        return span


class Fact(BaseModel):
    """A time-sensitive question about one subject and property."""

    model_config = ConfigDict(frozen=True)

    fact_id: str
    """Stable id, e.g. ``countries_byGDP/Italy/President of Italy``."""
    category: str
    """One of DyKnow's four, or a built catalogue's own (letters, digits and ``_``; see :data:`CATEGORY_RE`)."""
    subject: str
    subject_qid: str | None = None
    attribute: str | None = None
    """Second level of the DyKnow file (office title), absent for athletes and companies."""
    property: str
    templates: tuple[str, ...] = Field(min_length=1)
    """Paraphrases used for the audit: completion prefixes in our own wording."""
    generic: str | None = None
    qid_confidence: Literal["high", "low"] = "high"
    """``low`` marks a catalogue QID that was not verified against Wikidata."""
    template: str | None = None
    """The property template a built catalogue took the fact from (``chronoprobe catalogue build``); None for DyKnow's."""

    @field_validator("category")
    @classmethod
    def _valid_category(cls, value: str) -> str:
        if not CATEGORY_RE.fullmatch(value):
            raise ValueError(f"invalid category {value!r} (letters, digits and _, starting with a letter)")
        return value

    @field_validator("subject_qid")
    @classmethod
    def _valid_qid(cls, value: str | None) -> str | None:
        if value is not None and not QID_RE.fullmatch(value):
            raise ValueError(f"invalid QID {value!r}")
        return value

    @field_validator("property")
    @classmethod
    def _valid_pid(cls, value: str) -> str:
        if not PID_RE.fullmatch(value):
            raise ValueError(f"invalid property id {value!r}")
        return value


class FactAnswers(BaseModel):
    """The gold answers of one fact, as retrieved at one time."""

    fact_id: str
    statements: tuple[Statement, ...]
    retrieved: dt.date | None = Field(None, exclude=True)
    """The day these answers describe: their snapshot's ``retrieved``, set by :class:`Snapshot` (not
    written into its file, which holds it once). An end after it has not happened yet; None (answers
    outside a snapshot): any end counts, the original DyKnow reading."""

    def current(self, as_of: dt.date | None = None) -> tuple[Statement, ...]:
        """The statements current on the answers' day (``retrieved``), or valid at ``as_of``."""
        if as_of is None:
            return tuple(s for s in self.statements if s.current_on(self.retrieved))
        return tuple(s for s in self.statements if s.valid_at(as_of, self.retrieved))

    def latest(self) -> tuple[Statement, ...]:
        """The statement(s) with the latest start: the paper's wording of "up-to-date" (see docs/knowledge.md)."""
        dated = [(s.start.first_day(), s) for s in self.statements if s.start is not None]
        if not dated:
            return ()
        newest = max(start for start, _ in dated)
        return tuple(s for start, s in dated if start == newest)

    def counted(self) -> FactAnswers:
        """Only the statements that count as answers: those with a start qualifier."""
        kept = tuple(s for s in self.statements if s.start is not None)
        return self.model_copy(update={"statements": kept})


SNAPSHOT_FORMAT = 2
"""Version of the snapshot file. 1 (no ``format`` key): an end of "unknown value" was written as no end.
2: such an end is ``end_unknown``, and dates may carry a ``precision`` coarser than a year."""


class Snapshot(BaseModel):
    """A dated, pinned retrieval of gold answers for a set of facts."""

    name: str
    retrieved: dt.date
    endpoint: str
    query_hash: str
    source: str = "wikidata"
    license: str = "CC0-1.0 (Wikidata)"
    format: int = Field(SNAPSHOT_FORMAT, ge=1)
    """The file's version (:data:`SNAPSHOT_FORMAT`); a file without one is version 1."""
    answers: dict[str, FactAnswers]
    warnings: dict[str, str] = Field(default_factory=dict)
    """Per fact id, why its answers may be unusable (e.g. no statements came back)."""

    @model_validator(mode="after")
    def _answers_know_their_day(self) -> Snapshot:
        self.answers = {
            fact_id: answers
            if answers.retrieved == self.retrieved
            else answers.model_copy(update={"retrieved": self.retrieved})
            for fact_id, answers in self.answers.items()
        }
        return self
