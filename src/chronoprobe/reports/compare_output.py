"""``chronoprobe compare``'s outputs: the terminal table of each comparison, its file formats and the rule for
replacing a file it wrote (``--out``), as ``chronoprobe results`` has them (:mod:`chronoprobe.reports.tidy_formats`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from chronoprobe.metrics.records import ALL
from chronoprobe.records.publish import check_output_file, staged_files
from chronoprobe.reports.card import metric_label
from chronoprobe.reports.compare import COLUMNS, CompareRow, Comparison, to_frame
from chronoprobe.reports.plain_words import difference, difference_span, number, p_value
from chronoprobe.reports.tidy_formats import encode, is_table_of
from chronoprobe.tables import TableView

if TYPE_CHECKING:
    from chronoprobe.reports.tidy_formats import Format

__all__ = [
    "COMPARE_TABLE",
    "check_compare_file",
    "is_compare_table",
    "summary_view",
    "table_view",
    "write_compare_table",
]

COMPARE_TABLE = "a table written by `chronoprobe compare`"
"""What ``compare --out`` may replace (the refusal names it)."""
HEADER = ("metric", "class", "A", "B", "B − A [95% CI]", "n", "p", "test", "A only / B only")
TESTS = {"exact McNemar": "McNemar", "exact sign-flip": "sign-flip", "paired bootstrap": "bootstrap", "none": "–"}
SHORT = {"B − A [95% CI]": "B − A [CI]", "A only / B only": "A/B only"}
"""Shorter headers, where the table is narrowed to the terminal."""
DROPPABLE = ("test", "A only / B only", "n")
"""Columns left out, in this order, where the table does not fit the terminal otherwise (``--wide`` shows them)."""


def _cell(value: float | None, row: CompareRow) -> str:
    if value is None:
        return "–"
    if row.unit == "year" and row.metric.endswith("_years"):  # a duration in years, not a date
        return f"{value:.3g} y"
    return number(value, row.unit)


def _delta(row: CompareRow) -> str:
    if row.delta is None:
        return "–"
    shown = difference(row.delta, row.unit).removesuffix(" points").replace(" years", " y")
    if row.ci_low is None or row.ci_high is None:
        return shown
    if row.ci_low == row.ci_high:  # every resample alike: no interval to show, and no variation to test against
        return f"{shown} (no variation in n = {row.units or row.n})"
    undecided = " undecided" if row.disagrees else ""  # the interval and the test disagree: neither decides alone
    return f"{shown} [{difference_span(row.ci_low, row.ci_high, row.unit).replace(' to ', ', ')}]{undecided}"


def _test(row: CompareRow) -> str:
    """The test, and the interval's method where that is another: ``McNemar (CI Newcombe)``."""
    shown = TESTS.get(row.test, row.test)
    return f"{shown} (CI {row.interval_method})" if row.interval_method and row.ci_low is not None else shown


def _discordant(row: CompareRow) -> str:
    if row.discordant_ab is None or row.discordant_ba is None:
        return ""
    return f"{row.discordant_ab} / {row.discordant_ba}"


def table_view(comparison: Comparison, *, wide: bool = False) -> TableView:
    """One comparison as the terminal shows it: its sentences, then a row per metric and class. Narrowed to the
    terminal (readable metric names, short headers, columns left out) unless ``wide``: then today's whole table."""
    rows = [
        (
            row.metric if wide else ("" if shown == row.metric else metric_label(row.metric)),
            row.group,
            _cell(row.a, row),
            _cell(row.b, row),
            _delta(row),
            "–" if row.n is None else f"{row.n:,}",
            "–" if row.p is None else p_value(row.p),
            _test(row),
            _discordant(row),
        )
        for row, shown in zip(comparison.rows, [None, *(r.metric for r in comparison.rows)], strict=False)
    ]  # narrowed, a metric is named on its first row only
    a, b = comparison.names
    caption = (
        "B − A in points for shares; a difference decides only where its interval clears 0 and its test gives "
        'p < 0.05 ("undecided": the two disagree); A only / B only: the discordant units of a rate'
    )
    return TableView(
        title=comparison.title,
        columns=HEADER,
        rows=rows,
        caption=caption,
        before=(f"A = {a}, B = {b}", *comparison.lines()),
        short=SHORT,
        droppable=DROPPABLE,
        wide=wide,
        widen_hint="--wide shows them",
    )


def _verdicts(comparison: Comparison) -> tuple[int, int]:
    """Headline metrics over every item (over each class for a lens with no such number) that decide, and all
    that were tested."""
    tested = [row for row in comparison.rows if row.paired is not None and row.delta is not None]
    overall = [row for row in tested if row.group == ALL] or tested
    return sum(row.decides for row in overall), len(overall)


def summary_view(comparisons: Sequence[Comparison]) -> TableView:
    """Many pairs at once (two check folders of several models): the sentences of the pairs where a metric
    decides, then one row per pair counting the metrics that decide; each pair's table is ``--wide``'s."""
    before: list[str] = []
    rows = []
    for comparison in comparisons:
        deciding, tested = _verdicts(comparison)
        rows.append((comparison.lens, comparison.second.label, comparison.first.label, f"{deciding} of {tested}"))
        if deciding:
            before += [f"{comparison.title}:", *(line for line in comparison.lines() if "cannot tell" not in line)]
    quiet = sum(1 for c in comparisons if not _verdicts(c)[0])
    if quiet:
        before.append(f"{quiet} of the {len(comparisons)} pairs: no metric can tell the two apart.")
    return TableView(
        title=f"{len(comparisons)} pairs compared, each later side B against each earlier side A",
        columns=("lens", "B", "A", "metrics that decide"),
        rows=rows,
        before=tuple(before),
        short={"metrics that decide": "decide"},
        after=("Every pair's table: --wide; every row: --out FILE or --format csv.",),
    )


def is_compare_table(path: Path) -> bool:
    """A file ``compare`` wrote: a CSV, JSON or Parquet table with exactly its columns."""
    return is_table_of(path, COLUMNS)


def check_compare_file(out: Path) -> None:
    """A path we may write the table to: not a folder, not someone else's file, not inside a result folder."""

    check_output_file(out, "--out", ours=is_compare_table, what=COMPARE_TABLE)


def write_compare_table(rows: Sequence[CompareRow], out: Path, fmt: Format) -> None:
    """The rows as a ``fmt`` file at ``out``, published whole; only an earlier table of ``compare`` is replaced."""

    data = encode(to_frame(rows), fmt)
    with staged_files(out, ours=is_compare_table, what=COMPARE_TABLE) as staging:
        (staging / out.name).write_bytes(data)
