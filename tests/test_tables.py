"""A table view fitted to a terminal: each column as wide as its longest word, short headers, then columns left out
and named; drawn by rich at those widths, no word is broken and no line is longer than the terminal."""

from __future__ import annotations

import io

from rich.console import Console

from chronoprobe.tables import TableView, column_widths, longest_word

ROWS = [
    ("soft_constraint_pct.up-to-date", "countries_byGDP", "52.3%", "−12.3 [−23.3, −0.8]", "exact McNemar"),
    ("inconsistency_pct", "all", "0.0%", "0.0 [−2.9, +2.9]", "paired bootstrap"),
]
COLUMNS = ("metric", "class", "A", "B − A [95% CI]", "test")


def _drawn(view: TableView, width: int) -> list[str]:
    out = io.StringIO()
    fitted = view.fitted(width)
    console = Console(file=out, width=width)
    console.print(fitted.rich())
    for line in fitted.after:
        console.print(line)
    return out.getvalue().splitlines()


def test_a_column_is_no_narrower_than_its_longest_word_and_markup_is_not_counted() -> None:
    assert longest_word("[bold]up-to-date[/] (soft constraint)") == len("constraint)")
    # room for text at width 50 with 2 columns: 50 - 2 * 3 - 1 = 43; the longest lines (10 and 30) fit whole
    assert column_widths(("a", "b"), [("x" * 10, "y " * 15)], 50) == [10, 30]
    # at 30 (room 23) the second column takes what is left over the first's whole line: 10 + 13 (its word is 1)
    assert column_widths(("a", "b"), [("x" * 10, "y " * 15)], 30) == [10, 13]
    assert column_widths(("a", "b"), [("x" * 30, "y")], 30) is None  # a 30-letter word cannot fit 23


def test_a_table_too_wide_takes_its_short_headers_then_drops_columns_in_order_and_says_which() -> None:
    view = TableView("t", COLUMNS, ROWS, short={"B − A [95% CI]": "B − A"}, droppable=("test", "class"))
    assert view.fitted(200).columns == COLUMNS and view.fitted(200).after == ()
    # the longest words: 30, 15, 5, 7 ("[−23.3,") and 9 ("bootstrap"), each with 3 cells of padding and edge
    assert view.fitted(82).columns == ("metric", "class", "A", "B − A", "test") and view.fitted(82).after == ()
    narrow = view.fitted(72)
    assert narrow.columns == ("metric", "class", "A", "B − A")
    assert narrow.after == ("[dim]Left out to fit 72 columns: test; a wider terminal shows them.[/]",)
    narrower = view.fitted(60)
    assert narrower.columns == ("metric", "A", "B − A") and "columns: class, test;" in narrower.after[0]
    assert view.fitted(50) is view  # nothing fits: left to rich
    wide = TableView("t", COLUMNS, ROWS, droppable=("test",), wide=True)
    assert wide.fitted(40) is wide


def test_drawn_at_its_fitted_widths_no_word_is_broken_and_no_line_is_too_long() -> None:
    view = TableView("paired", COLUMNS, ROWS, short={"B − A [95% CI]": "B − A"}, droppable=("test", "class"))
    for width in (60, 72, 80):
        lines = _drawn(view, width)
        assert max(len(line) for line in lines) <= width
        words = {word for line in lines for word in line.replace("│", " ").replace("┃", " ").split()}
        shown = view.fitted(width)
        for row in shown.rows:
            assert set(" ".join(row).split()) <= words, (width, row)
