"""A table to show, as plain data (:class:`TableView`): what a listing or report looks like, apart from where it
is drawn. The commands draw one with :meth:`TableView.rich`; a Python user reads the same rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table

__all__ = ["TableView"]


@dataclass(frozen=True)
class TableView:
    """A table: its title, columns and rows of text (rich markup allowed), a caption, and lines shown after it
    (rich markup too)."""

    title: str
    columns: tuple[str, ...]
    rows: Sequence[tuple[str, ...]]
    caption: str | None = None
    after: tuple[str, ...] = ()
    fold: bool = True
    """A long cell wraps, never cut (else rich's default, an ellipsis)."""

    def rich(self) -> Table:
        """The table as rich draws it (the lines :attr:`after` are the caller's to print)."""
        table = Table(title=self.title, caption=self.caption)
        for column in self.columns:
            table.add_column(column, overflow="fold" if self.fold else "ellipsis")
        for row in self.rows:
            table.add_row(*row)
        return table
