"""Typed facts and their time-qualified answers.

A :class:`Fact` is one (subject, property) question, e.g. (Italy, head of
state). Its :class:`Statement` list holds every non-deprecated Wikidata value
with the validity qualifiers start (P580), end (P582) and point in time (P585).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

QID_RE = re.compile(r"^Q[1-9][0-9]{0,11}$")
PID_RE = re.compile(r"^P[1-9][0-9]{0,7}$")

DyknowCategory = Literal["countries_byGDP", "athletes_byPayment", "companies_byRevenue", "organizations"]
"""DyKnow's four categories (its file and the editing datasets know only these)."""
Category = DyknowCategory  # the older name, kept for imports from before catalogues could name their own
CATEGORY_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
"""A catalogue category: DyKnow's names, or a built catalogue's (a template's ``category``)."""


class WikidataDate(BaseModel):
    """A Wikidata time value with its precision; unknown month/day are None."""

    model_config = ConfigDict(frozen=True)

    year: int
    month: int | None = None
    day: int | None = None

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
        return cls(year=y, month=m, day=d)

    def earliest(self) -> dt.date:
        return dt.date(max(self.year, 1), self.month or 1, self.day or 1)

    def latest(self) -> dt.date:
        """The last day this (possibly imprecise) date could mean."""
        year = max(self.year, 1)
        if self.month is None:
            return dt.date(year, 12, 31)
        if self.day is None:
            next_month = dt.date(year + (self.month == 12), self.month % 12 + 1, 1)
            return next_month - dt.timedelta(days=1)
        return dt.date(year, self.month, self.day)

    def wikidata(self) -> str:
        return f"+{self.year:04d}-{self.month or 0:02d}-{self.day or 0:02d}T00:00:00Z"

    def __str__(self) -> str:
        if self.month is None:
            return f"{self.year:04d}"
        if self.day is None:
            return f"{self.year:04d}-{self.month:02d}"
        return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"


class Statement(BaseModel):
    """One value of a fact with its validity period."""

    model_config = ConfigDict(frozen=True)

    label: str
    qid: str | None = None
    aliases: tuple[str, ...] = ()
    start: WikidataDate | None = None
    end: WikidataDate | None = None
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

    def valid_at(self, when: dt.date) -> bool:
        """True if this value held at ``when`` (a point-in-time value is not an end date)."""
        if self.start is None or self.start.earliest() > when:
            return False
        return self.end is None or self.end.latest() >= when

    @property
    def is_current(self) -> bool:
        """Open-ended: has a start and no end (the paper's 'up-to-date' answer)."""
        return self.start is not None and self.end is None

    def span(self) -> str:
        """The validity period in words: ``start - end`` (``?`` and ``now`` for open ends), with any point in time."""
        start = str(self.start) if self.start else "?"
        end = str(self.end) if self.end else "now"
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

    def current(self, as_of: dt.date | None = None) -> tuple[Statement, ...]:
        if as_of is None:
            return tuple(s for s in self.statements if s.is_current)
        return tuple(s for s in self.statements if s.valid_at(as_of))

    def latest(self) -> tuple[Statement, ...]:
        """The statement(s) with the latest start: the paper's wording of "up-to-date" (see docs/knowledge.md)."""
        dated = [(s.start.earliest(), s) for s in self.statements if s.start is not None]
        if not dated:
            return ()
        newest = max(start for start, _ in dated)
        return tuple(s for start, s in dated if start == newest)

    def counted(self) -> FactAnswers:
        """Only the statements that count as answers: those with a start qualifier."""
        return FactAnswers(fact_id=self.fact_id, statements=tuple(s for s in self.statements if s.start is not None))


class Snapshot(BaseModel):
    """A dated, pinned retrieval of gold answers for a set of facts."""

    name: str
    retrieved: dt.date
    endpoint: str
    query_hash: str
    source: str = "wikidata"
    license: str = "CC0-1.0 (Wikidata)"
    answers: dict[str, FactAnswers]
    warnings: dict[str, str] = Field(default_factory=dict)
    """Per fact id, why its answers may be unusable (e.g. no statements came back)."""
