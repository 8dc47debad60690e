"""``chronoprobe card RUN_DIR... --out card.html``: one self-contained HTML report card."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

_err = Console(stderr=True)


def card(
    dirs: Annotated[
        list[Path],
        typer.Argument(
            metavar="DIR",
            help="Result folders, or folders holding them (searched three levels down: results/check/<check>/<lens> too).",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            help="Where to write the card (an HTML file). An earlier card there is replaced; any other file is refused, "
            "never overwritten."
        ),
    ] = Path("card.html"),
    title: Annotated[str, typer.Option(help="Page title.")] = "chronoprobe report card",
) -> None:
    """Write one offline HTML page: per lens the headline numbers with intervals, models side by side, plots, provenance."""
    from chronoprobe.reports.card import write_card

    runs = write_card(
        dirs, out, title, warn=lambda line: _err.print(f"[yellow]warning[/]: {line}", highlight=False, soft_wrap=True)
    )
    lenses = sorted({r.lens for r in runs})
    _err.print(f"card with {len(runs)} run(s) ({', '.join(lenses)}) written to {out}", highlight=False)
