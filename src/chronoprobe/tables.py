"""A table to show, as plain data (:class:`TableView`): what a listing or report looks like, apart from where it
is drawn. The commands draw one with :meth:`TableView.rich`; a Python user reads the same rows.

A view fits a terminal's width without breaking a word inside (:meth:`TableView.fitted`): each column is at
least as wide as its longest word; where the whole table is wider than the terminal, the headers take their
short names (:attr:`TableView.short`), then the columns named in :attr:`TableView.droppable` go, first named
first, and a closing line says which. The widths are computed here, not left to rich, which narrows the widest
column first and folds its words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

__all__ = ["TableView", "column_widths", "longest_word"]

_EDGES = 1
"""Rich's default box draws one character left of every column and one after the last."""
_PADDING = 2
"""One space either side of a cell."""


def _plain(cell: str) -> str:
    return Text.from_markup(cell).plain


def longest_word(cell: str) -> int:
    """Cells taken by the longest run of characters without a space in ``cell`` (rich markup read)."""
    return max((cell_len(word) for word in _plain(cell).split()), default=0)


def _longest_line(cell: str) -> int:
    return max((cell_len(line) for line in _plain(cell).splitlines()), default=0)


def column_widths(columns: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> list[int] | None:
    """Each column's text width so that the table fits ``width`` with no word broken: every column its longest
    line where all fit, else its longest word and a share of what is left by how much more it would take; None
    when even the longest words do not fit."""
    cells = [[column, *(row[i] for row in rows)] for i, column in enumerate(columns)]
    least = [max(longest_word(cell) for cell in column) for column in cells]
    most = [max(_longest_line(cell) for cell in column) for column in cells]
    room = width - len(columns) * (_PADDING + _EDGES) - _EDGES
    if sum(least) > room:
        return None
    if sum(most) <= room:
        return most
    spare, wanted = room - sum(least), [m - lo for m, lo in zip(most, least, strict=True)]
    shares = [spare * want // sum(wanted) for want in wanted]
    return [lo + share for lo, share in zip(least, shares, strict=True)]


@dataclass(frozen=True)
class TableView:
    """A table: its title, columns and rows of text (rich markup allowed), a caption, lines shown before and
    after it (rich markup too), and how it narrows to fit a terminal."""

    title: str
    columns: tuple[str, ...]
    rows: Sequence[tuple[str, ...]]
    caption: str | None = None
    after: tuple[str, ...] = ()
    fold: bool = True
    """A long cell wraps, never cut (else rich's default, an ellipsis)."""
    before: tuple[str, ...] = ()
    """Lines shown before the table (its verdicts, in sentences)."""
    short: Mapping[str, str] = field(default_factory=dict)
    """A column's shorter header, used where the full headers do not fit."""
    droppable: tuple[str, ...] = ()
    """Columns left out, first named first, where the table does not fit otherwise."""
    wide: bool = False
    """Drawn whole at its own width whatever the terminal's (``--wide``), for the terminal to wrap."""
    widen_hint: str = "a wider terminal shows them"
    """How to see the columns left out (the closing line that names them ends with it)."""
    widths: tuple[int, ...] | None = None
    """Each column's text width, as :meth:`fitted` chose them (None: rich's own)."""

    def fitted(self, width: int) -> TableView:
        """This view narrowed to ``width`` terminal cells: short headers, then columns left out (named in a
        closing line); itself when it fits as it is, is ``wide``, or cannot fit even with every column dropped."""
        if self.wide:
            return self
        natural = column_widths(self.columns, self.rows, width)
        if natural is not None and natural == column_widths(self.columns, self.rows, 10**6):
            return replace(self, widths=tuple(natural))
        kept = list(range(len(self.columns)))
        for dropping in (None, *self.droppable):
            if dropping is not None and dropping in self.columns:
                kept.remove(self.columns.index(dropping))
            view = self._only(kept)
            found = column_widths(view.columns, view.rows, width)
            if found is not None:
                return replace(view, widths=tuple(found), after=(*self._dropped_note(kept, width), *self.after))
        return self

    def _only(self, kept: Sequence[int]) -> TableView:
        """The columns at ``kept``, each by its short header."""
        return replace(
            self,
            columns=tuple(self.short.get(self.columns[i], self.columns[i]) for i in kept),
            rows=[tuple(row[i] for i in kept) for row in self.rows],
        )

    def _dropped_note(self, kept: Sequence[int], width: int) -> tuple[str, ...]:
        dropped = [name for i, name in enumerate(self.columns) if i not in kept]
        if not dropped:
            return ()
        return (f"[dim]Left out to fit {width} columns: {', '.join(dropped)}; {self.widen_hint}.[/]",)

    def rich(self) -> Table:
        """The table as rich draws it, at :attr:`widths` where :meth:`fitted` set them (the lines :attr:`before`
        and :attr:`after` are the caller's to print)."""
        table = Table(title=self.title, caption=self.caption)
        widths = self.widths or (None,) * len(self.columns)
        for column, width in zip(self.columns, widths, strict=True):
            table.add_column(column, overflow="fold" if self.fold else "ellipsis", width=width)
        for row in self.rows:
            table.add_row(*row)
        return table
