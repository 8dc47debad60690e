"""Two runs of the same items compared paired: ``chronoprobe compare`` and ``check --baseline``.

A *side* is one model in one run folder. Two sides of the same lens are compared on the items both were
asked: every headline metric of ``chronoprobe results``, per class, gets both values, the paired difference
B − A with its 95% interval, n, the test and its p-value, and for rates the discordant counts
(:func:`chronoprobe.metrics.paired.compare_outcomes` on the outcomes the lens declares,
``Paired.comparable``). A metric the lens gives no item outcomes for (a knowledge date) shows both values and
their difference without a test.

Nothing here knows a lens: the lens is found through the registry and its outcomes come from its own hook.
Pure readers: nothing here writes a file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from chronoprobe import plugins
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.metrics.paired import (
    ASSUMED_DISCORDANCE,
    POWER,
    Comparable,
    Draws,
    ItemOutcomes,
    PairedDifference,
    compare_outcomes,
    units_needed,
    units_needed_for_mean,
)
from chronoprobe.metrics.records import ALL
from chronoprobe.records.runlog import Metric, Run
from chronoprobe.reports.plain_words import difference, difference_span, p_is
from chronoprobe.reports.tidy_table import find_runs

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ASSUMED_DISCORDANCE",
    "COLUMNS",
    "CompareRow",
    "Comparison",
    "Side",
    "comparable_of",
    "compare_folders",
    "compare_runs",
    "compare_sides",
    "sides_of",
    "to_frame",
]

COLUMNS: tuple[str, ...] = (
    "run",
    "model",
    "lens",
    "dataset",
    "class",
    "metric",
    "a",
    "b",
    "delta",
    "ci_low",
    "ci_high",
    "n",
    "p",
    "test",
    "discordant_ab",
    "discordant_ba",
)
"""The columns of ``chronoprobe results`` that name a number (run, model, lens, dataset, class, metric), then
A, B, B − A with its 95% interval, the shared items, the test and its p-value, and the discordant counts."""
INTERVAL_METHODS = {"exact McNemar": "Newcombe", "exact sign-flip": "bootstrap"}
"""Per test, the method that made its row's interval where that is another (docs/statistics.md)."""
SHOWN_UNSHARED = 3
"""Unshared items named in the line that counts them (the rest as a count)."""


@dataclass(frozen=True)
class Side:
    """One model of one run folder: what a comparison puts on one side."""

    run: Run
    key: str
    """The run's key for the model (as its records and rows name it)."""
    name: str
    """The model's display name."""

    @property
    def label(self) -> str:
        return f"{self.name} ({self.run.label})"


@dataclass(frozen=True)
class CompareRow:
    """One metric over one class, compared: A's and B's values and the paired difference B − A."""

    run: str
    """``A-run vs B-run`` (one folder's label when both sides are models of one run)."""
    model: str
    """``A vs B`` (one name when both sides are the same model)."""
    lens: str
    dataset: str
    group: str
    """The class, as ``results`` names it (its column ``class``)."""
    metric: str
    a: float | None
    b: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    """Shared items."""
    p: float | None
    test: str
    discordant_ab: int | None
    """For a rate: units A gets and B does not."""
    discordant_ba: int | None
    unit: str = ""
    """The metric's unit (``%``, ``rate``, ``year`` or none), as its records give it."""
    units: int | None = None
    """Shared units (facts, questions) the interval rests on."""
    paired: PairedDifference | None = field(default=None, repr=False)
    outcome: ItemOutcomes | None = field(default=None, repr=False)

    @property
    def decides(self) -> bool:
        return self.paired is not None and self.paired.decides

    @property
    def interval_method(self) -> str:
        """What made the interval where the test is another method (``Newcombe`` beside exact McNemar,
        ``bootstrap`` beside the exact sign-flip test); empty where one method gives both."""
        return INTERVAL_METHODS.get(self.test, "")

    @property
    def disagrees(self) -> bool:
        """The interval and the test say different things (one clears 0, the other does not): undecided, and said so."""
        if self.paired is None or self.ci_low is None or self.ci_high is None or self.p is None:
            return False
        clears = self.ci_low > 0 or self.ci_high < 0
        return clears != (self.p < 1.0 - self.paired.level)

    def as_dict(self) -> dict[str, Any]:
        """The row as the table's :data:`COLUMNS`."""
        return {
            "run": self.run,
            "model": self.model,
            "lens": self.lens,
            "dataset": self.dataset,
            "class": self.group,
            "metric": self.metric,
            "a": self.a,
            "b": self.b,
            "delta": self.delta,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n": self.n,
            "p": self.p,
            "test": self.test,
            "discordant_ab": self.discordant_ab,
            "discordant_ba": self.discordant_ba,
        }


@dataclass
class Comparison:
    """Two sides of one lens compared: the rows, and what was left out."""

    first: Side
    second: Side
    lens: str
    rows: list[CompareRow] = field(default_factory=list)
    only_first: list[str] = field(default_factory=list)
    """Units (facts, questions) only A was asked: left out of every row."""
    only_second: list[str] = field(default_factory=list)
    unit: str = "items"
    shared: int | None = None
    """Units (facts, questions) both were asked; None when the lens gives no item outcomes to count them."""
    different_items: bool = False
    """The two runs draw their items from different sources (compared on the shared ones, as asked)."""
    sources: tuple[str, str] = ("", "")

    @property
    def title(self) -> str:
        return f"{self.lens}: B {self.second.label} vs A {self.first.label}"

    def unshared_line(self) -> str | None:
        """One line that counts and names the units only one side has; None when they share all."""
        if not self.only_first and not self.only_second:
            return None
        parts = []
        for items, side in ((self.only_first, "A"), (self.only_second, "B")):
            if items:
                named = ", ".join(items[:SHOWN_UNSHARED]) + (", …" if len(items) > SHOWN_UNSHARED else "")
                parts.append(f"{counted(len(items), self.unit)} only in {side} ({named})")
        return f"{self.lens}: " + "; ".join(parts) + ": left out of every comparison"

    def notes(self) -> list[str]:
        """What the comparison left out: the items' sources when they differ, and the unshared items."""
        said = []
        if self.different_items:
            said.append(
                f"{self.lens}: the items come from {self.sources[0]} (A) and {self.sources[1]} (B); "
                "only the shared ones are compared (--allow-different-items)"
            )
        unshared = self.unshared_line()
        if unshared:
            said.append(unshared)
        return said

    def lines(self) -> list[str]:
        """What the comparison says in plain words: the unshared items, the items' sources when they differ, then
        one sentence per headline metric over every item: the difference where it decides, else what it needs."""
        said = self.notes()
        a, b = self.names
        tested = [row for row in self.rows if row.paired is not None and row.delta is not None]
        if tested and all(row.paired is not None and row.paired.spread == 0 for row in tested):
            units = max(row.units or 0 for row in tested)
            return [*said, f"{self.lens}: {b} and {a} agree on every one of the {counted(units, self.unit)}"]
        if any(row.group == ALL for row in self.rows):
            return said + [text for row in self.rows if (text := sentence(row, a, b)) is not None]
        # a lens whose numbers are per class only (conflicts): the classes that decide, then a count of the rest
        deciding = [row for row in tested if row.decides]
        said += [f"{row.group}: {sentence(row, a, b, any_class=True)}" for row in deciding]
        if len(tested) > len(deciding):
            said.append(f"{self.lens}: {len(tested) - len(deciding)} other metric and class pairs cannot tell")
        return said

    @property
    def names(self) -> tuple[str, str]:
        """How the sentences call A and B: the models' names, or the runs' folders when the names are the same."""
        if self.first.name != self.second.name:
            return self.first.name, self.second.name
        return self.first.run.label, self.second.run.label


# --- the sides -------------------------------------------------------------------------------------------


def sides_of(runs: Sequence[Run]) -> list[Side]:
    """Every model of every run, in order: the sides a comparison may put against each other."""
    found = []
    for run in runs:
        for entry in run.models:
            found.append(Side(run, entry.key, entry.name))
    return found


@runtime_checkable
class Paired(Protocol):
    """The optional part of a lens that ``compare`` reads: a lens (class) with this method compares paired; one
    without it shows both values and no test (its runs still appear in ``results`` and ``compare``'s table)."""

    def comparable(self, run: Run, model: str) -> Comparable | None:
        """``model``'s outcomes in ``run`` item by item, for a paired comparison with a run of the same items
        (``chronoprobe compare``, ``check --baseline``, a plan line's measured power): per metric and class, each
        item's outcome, and what the items are drawn from; None: this run cannot be compared paired."""


def comparable_of(side: Side) -> Comparable | None:
    """The side's outcomes item by item, from its lens's compare part (None: the lens's runs do not compare paired);
    a DataError naming the file when its items do not read."""
    cls = plugins.load(side.run.lens)
    if not isinstance(cls, Paired):
        return None
    with plugins.blame(cls, f"failed to compare {side.run.path}"):
        return cls.comparable(side.run, side.key)


# --- one comparison ----------------------------------------------------------------------------------------


def _records(run: Run, key: str) -> dict[tuple[str, str], Metric]:
    return {(m.name, m.group): m for m in run.summary.metrics if m.model == key}


def _headline_names(*runs: Run) -> list[str]:
    return list(dict.fromkeys(m.name for run in runs for m in run.summary.metrics if m.headline))


def _units(outcomes: Sequence[ItemOutcomes]) -> list[str]:
    """Every unit the outcomes over every item cover, in first-seen order (a unit is a fact, a question ...)."""
    over_all = [o for o in outcomes if o.group == ALL] or list(outcomes)
    found: dict[str, None] = {}
    for outcome in over_all:
        found.update(dict.fromkeys(outcome.clusters.values() if outcome.clusters is not None else outcome.values))
    return list(found)


def compare_sides(
    first: Side, second: Side, *, allow_different_items: bool = False, draws: Draws | None = None
) -> Comparison:
    """``second`` against ``first`` (B − A) on their shared items; a DataError when the two were asked items of
    different sources, unless ``allow_different_items``."""
    a, b = comparable_of(first), comparable_of(second)
    lens = first.run.lens
    comparison = Comparison(first, second, lens)
    if a is not None and b is not None:
        comparison.sources = (a.source, b.source)
        if a.source != b.source:
            if not allow_different_items:
                raise DataError(
                    str(second.run.path),
                    f"its {lens} items come from {b.source}, those of {first.run.path} from {a.source}; "
                    "give --allow-different-items to compare the items they share",
                )
            comparison.different_items = True
        units_a, units_b = _units(a.outcomes), _units(b.outcomes)
        shared_a, shared_b = set(units_a), set(units_b)
        comparison.only_first = [u for u in units_a if u not in shared_b]
        comparison.only_second = [u for u in units_b if u not in shared_a]
        comparison.shared = len(shared_a & shared_b)
        comparison.unit = next((o.unit for o in a.outcomes), "items")
    comparison.rows = _rows(comparison, a, b, draws or Draws())
    return comparison


def _rows(comparison: Comparison, a: Comparable | None, b: Comparable | None, draws: Draws) -> list[CompareRow]:
    first, second = comparison.first, comparison.second
    records_a, records_b = _records(first.run, first.key), _records(second.run, second.key)
    outcomes_a = {(o.metric, o.group): o for o in (a.outcomes if a else ())}
    outcomes_b = {(o.metric, o.group): o for o in (b.outcomes if b else ())}
    run = first.run.label if first.run.path == second.run.path else f"{first.run.label} vs {second.run.label}"
    model = first.name if first.name == second.name else f"{first.name} vs {second.name}"
    dataset = (
        first.run.dataset if first.run.dataset == second.run.dataset else f"{first.run.dataset} vs {second.run.dataset}"
    )
    headline = set(_headline_names(first.run, second.run))
    keys = [k for k in dict.fromkeys([*records_a, *records_b]) if k[0] in headline]
    names = list(dict.fromkeys(name for name, _ in keys))
    keys.sort(key=lambda k: (names.index(k[0]), k[1] != ALL))  # per metric: every item first, then each class
    rows = []
    for key in keys:
        found = _row(key, records_a.get(key), records_b.get(key), outcomes_a.get(key), outcomes_b.get(key), draws)
        rows.append(
            CompareRow(
                run=run, model=model, lens=comparison.lens, dataset=dataset, group=key[1], metric=key[0], **found
            )
        )
    return rows


def _row(
    key: tuple[str, str],
    record_a: Metric | None,
    record_b: Metric | None,
    outcome_a: ItemOutcomes | None,
    outcome_b: ItemOutcomes | None,
    draws: Draws,
) -> dict[str, Any]:
    """A row's numbers: paired on the shared items where both sides give outcomes, else the records' difference."""
    record = record_a or record_b
    unit = record.unit if record is not None else ""
    value_a = record_a.value if record_a is not None else None
    value_b = record_b.value if record_b is not None else None
    if outcome_a is None or outcome_b is None or not outcome_a.values or not outcome_b.values:
        delta = value_b - value_a if value_a is not None and value_b is not None else None
        return {
            "a": value_a, "b": value_b, "delta": delta, "ci_low": None, "ci_high": None, "n": None, "p": None,
            "test": "none", "discordant_ab": None, "discordant_ba": None, "unit": unit,
        }  # fmt: skip
    paired = compare_outcomes(outcome_a, outcome_b, draws=draws)
    every = set(outcome_a.values) == set(outcome_b.values)
    shown_a: float | None
    shown_b: float | None
    if every and value_a is not None and value_b is not None:  # the runs' own values, to the last digit
        shown_a, shown_b, delta = value_a, value_b, value_b - value_a
    else:
        shown_a, shown_b, delta = paired.first, paired.second, paired.delta
    return {
        "a": shown_a,
        "b": shown_b,
        "delta": delta,
        "ci_low": paired.ci_low,
        "ci_high": paired.ci_high,
        "n": paired.items,
        "p": paired.p,
        "test": paired.test,
        "discordant_ab": paired.discordant_ab,
        "discordant_ba": paired.discordant_ba,
        "unit": unit,
        "units": paired.n,
        "paired": paired,
        "outcome": outcome_a,
    }


# --- in plain words --------------------------------------------------------------------------------------


def needed(row: CompareRow) -> int | None:
    """Units a difference of the size measured needs at 80% power (None when none was measured)."""
    paired, outcome = row.paired, row.outcome
    if paired is None or outcome is None or paired.delta is None or paired.spread is None:
        return None
    if paired.test == "exact McNemar":
        return units_needed(paired.delta / outcome.scale, paired.spread)
    return units_needed_for_mean(paired.delta, paired.spread)


def sentence(row: CompareRow, a: str = "A", b: str = "B", *, any_class: bool = False, named: bool = True) -> str | None:
    """One sentence about a headline row over every item: the difference where it decides, else what a difference
    of its size would need; None for a row without a paired test, or over one class unless ``any_class``. A row
    whose lens names a verdict (``knows more``) starts with it, unless ``named`` is False (the check's paragraph
    names it itself)."""
    paired, outcome = row.paired, row.outcome
    if (row.group != ALL and not any_class) or paired is None or outcome is None or row.delta is None:
        return None
    name = row.metric
    if outcome.verdict:  # ``knows more (dated_pct)``; a verdict that names its metric already stands alone
        named_in = row.metric.replace("_", " ") in outcome.verdict
        name = outcome.verdict if named_in else f"{outcome.verdict} ({row.metric})"
    if not paired.decides:
        return f"{name}: {cannot_tell(row)}; {needs_text(row)}."
    said = _decided(row, a, b)
    return f"{outcome.verdict.capitalize()}: {said}" if named and outcome.verdict else said


def cannot_tell(row: CompareRow) -> str:
    """``cannot tell``, with how many items both models have where the lens names them (``cannot tell (both date
    only 11 facts)``)."""
    outcome = row.outcome
    if outcome is None or not outcome.shared:
        return "cannot tell"
    count = row.paired.n if row.paired is not None else 0
    return f"cannot tell ({outcome.shared} only {counted(count, outcome.unit)})"


def _decided(row: CompareRow, a: str, b: str) -> str:
    paired, outcome = row.paired, row.outcome
    assert paired is not None and outcome is not None and row.delta is not None
    name = row.metric
    shown = (
        f"{difference(row.delta, row.unit)}, 95% CI {difference_span(row.ci_low or 0.0, row.ci_high or 0.0, row.unit)}"
    )
    test = f"{paired.test} {p_is(paired.p or 0.0)}"
    if outcome.kind == "rate" and outcome.phrase and paired.test == "exact McNemar":
        more = (paired.discordant_ba or 0) - (paired.discordant_ab or 0)
        side = "more" if more > 0 else "fewer"
        return f"{b} {outcome.phrase} on {abs(more)} {side} of {counted(paired.n, outcome.unit)} than {a} ({shown}; {test})."
    if outcome.kind == "rate" and outcome.phrase:
        side = "more" if row.delta > 0 else "less"
        return f"{b} {outcome.phrase} {side} often than {a} ({shown}, over {counted(paired.n, outcome.unit)}; {test})."
    side = ("later" if row.delta > 0 else "earlier") if row.unit == "year" else ("higher" if row.delta > 0 else "lower")
    said = f"is {side} than {a}'s ({shown}, over {counted(paired.n, outcome.unit)}; {test})."
    return f"{b}'s {name} {said}" if outcome.verdict else f"{name}: {b}'s {said}"


def needs_text(row: CompareRow) -> str:
    """What a difference of the measured size needs (or that the two agree, or that none was measured)."""
    paired, outcome = row.paired, row.outcome
    assert paired is not None and outcome is not None
    if paired.delta is None or math.isclose(paired.delta, 0.0, abs_tol=1e-12):
        if paired.spread is not None and paired.spread == 0:
            return f"the two agree on every one of the {counted(paired.n, outcome.unit)}"
        return f"no difference measured over {counted(paired.n, outcome.unit)}"
    count = needed(row)
    if count is None:
        return f"{counted(paired.n, outcome.unit)} cannot size a difference of {difference(row.delta or 0.0, row.unit)}"
    return (
        f"a difference this size ({difference(row.delta or 0.0, row.unit)}) needs about {count:,} "
        f"{outcome.unit} at {POWER:.0%} power ({paired.n:,} compared)"
    )


# --- several folders -------------------------------------------------------------------------------------


def counted(n: int, unit: str) -> str:
    """``130 facts``, ``1 fact``."""
    return f"{n:,} {unit.removesuffix('s') if n == 1 else unit}"


def compare_runs(
    runs: Sequence[Run], *, allow_different_items: bool = False, where: str = "compare"
) -> list[Comparison]:
    """Every pair of sides of the same lens among ``runs`` (every model of each), in the order given: B − A for
    each later side B against each earlier side A. A ConfigError when no lens has two sides."""
    sides = sides_of(runs)
    lenses = list(dict.fromkeys(side.run.lens for side in sides))
    draws = Draws()
    found = []
    for lens in lenses:
        mine = [side for side in sides if side.run.lens == lens]
        for first, second in combinations(mine, 2):
            found.append(compare_sides(first, second, allow_different_items=allow_different_items, draws=draws))
    if not found:
        shown = ", ".join(f"{s.run.lens}: {s.label}" for s in sides) or "no run"
        raise ConfigError(where, f"needs two runs (or two models) of the same lens; found {shown}")
    return found


def compare_folders(
    paths: Sequence[Path], *, allow_different_items: bool = False
) -> tuple[list[Comparison], list[str]]:
    """:func:`compare_runs` over the run folders named by ``paths`` (run folders, check folders, folders of
    them), and the warnings for folders skipped."""
    found = find_runs(paths)
    return compare_runs(found.runs, allow_different_items=allow_different_items), found.warnings


def to_frame(rows: Sequence[CompareRow]) -> pd.DataFrame:
    """The rows as a DataFrame with the :data:`COLUMNS`: counts as nullable integers, numbers as floats."""
    import pandas as pd  # deferred: pandas

    frame = pd.DataFrame([r.as_dict() for r in rows], columns=list(COLUMNS))
    for column in ("run", "model", "lens", "dataset", "class", "metric", "test"):
        frame[column] = frame[column].astype("string")
    for column in ("a", "b", "delta", "ci_low", "ci_high", "p"):
        frame[column] = pd.to_numeric(frame[column]).astype("float64")
    for column in ("n", "discordant_ab", "discordant_ba"):
        frame[column] = pd.array(frame[column].tolist(), dtype="Int64")
    return frame
