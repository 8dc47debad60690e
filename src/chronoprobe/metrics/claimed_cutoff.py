"""The knowledge cutoff a model claims, read from its own answers. Pure functions.

People ask a model for its cutoff and publish the answer; models are often wrong about it, by months
or years. The outdated lens asks three paraphrases of the question and sets the answer beside the
knowledge date its answers describe (docs/outdated.md, "What the model is told, and what it says").

Reading an answer never invents a date: a month is taken only where the answer names one beside a
year ("December 2023", "Dec. 2023", "2023-12", "12/2023"), else the year alone ("2023", "late 2023");
an answer that names no year of 1900-2099 gives nothing. The first date the answer names is the one
read ("until September 2021; I was released in 2022" reads 2021-09). Over the three answers the claim
is the year most of them name (a tie: the one named first), and its month the one most of the answers
naming that year give, when any does.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Claim", "ClaimedDate", "combine_claims", "read_claim"]

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sept", "sep"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_MONTH_NAME = r"(?P<name>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")"
_FORMS = (
    re.compile(rf"\b{_MONTH_NAME}\.?,?\s+(?:of\s+)?{_YEAR}\b", re.IGNORECASE),  # December 2023, Sept. 2021
    re.compile(rf"\b{_YEAR}[-/](?P<month>0?[1-9]|1[0-2])\b(?![-/]\d)"),  # 2023-12, 2023/12 (not 2023-12-01's day)
    re.compile(rf"\b{_YEAR}-(?P<month>0[1-9]|1[0-2])-\d{{2}}\b"),  # 2023-12-01
    re.compile(rf"\b(?P<month>0?[1-9]|1[0-2])/{_YEAR}\b"),  # 12/2023
    re.compile(rf"(?<![\d.,]){_YEAR}(?![\d.,]\d)"),  # 2023 alone (not 1,2023 or 2023.5)
)


@dataclass(frozen=True)
class ClaimedDate:
    """A date read from an answer: a year, and its month when the answer names one."""

    year: int
    month: int | None = None

    @property
    def label(self) -> str:
        """``2023-12``, or ``2023`` when no month was named."""
        return f"{self.year:04d}" if self.month is None else f"{self.year:04d}-{self.month:02d}"

    @property
    def decimal(self) -> float:
        """The first day of the month (or of the year) as a decimal year: ``2023-12`` -> 2023.917."""
        return self.year + ((self.month or 1) - 1) / 12.0


def read_claim(answer: str) -> ClaimedDate | None:
    """The first date ``answer`` names (a month where it names one with the year); None when it names none."""
    found: list[tuple[int, int, ClaimedDate]] = []
    for rank, form in enumerate(_FORMS):
        for match in form.finditer(answer):
            parts = match.groupdict()
            month = _MONTHS[parts["name"].lower()] if parts.get("name") else parts.get("month")
            date = ClaimedDate(int(parts["year"]), int(month) if month is not None else None)
            found.append((match.start(), rank, date))
    if not found:
        return None
    return min(found, key=lambda item: (item[0], item[1]))[2]  # the first named; at one place, the form with a month


@dataclass(frozen=True)
class Claim:
    """What the answers claim: the date (None when none parses) and how many answers named a date."""

    date: ClaimedDate | None
    parsed: int
    """Answers that named a date (the n of the claim)."""
    asked: int


def combine_claims(dates: Sequence[ClaimedDate | None]) -> Claim:
    """The claim of several answers (one per paraphrase, in order): the year most name, then its month."""
    named = [d for d in dates if d is not None]
    if not named:
        return Claim(date=None, parsed=0, asked=len(dates))
    years = Counter(d.year for d in named)
    top = max(years.values())
    year = next(d.year for d in named if years[d.year] == top)  # a tie: the year named first
    months = Counter(d.month for d in named if d.year == year and d.month is not None)
    month = None
    if months:
        most = max(months.values())
        month = next(d.month for d in named if d.year == year and d.month is not None and months[d.month] == most)
    return Claim(date=ClaimedDate(year, month), parsed=len(named), asked=len(dates))
