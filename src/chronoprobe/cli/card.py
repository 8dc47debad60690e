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
            help="Result folders, or folders holding them (searched three levels down: results/check/<check>/<lens> too)."
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
    from chronoprobe.publish import check_not_input, staged_files
    from chronoprobe.reports.card import CARD, check_card_path, is_card, render_card
    from chronoprobe.reports.tidy import find_runs

    check_card_path(out)
    found = find_runs(dirs)
    check_not_input(out, [("RUN_DIR", run.path) for run in found.runs])
    for warning in found.warnings:
        _err.print(f"[yellow]warning[/]: {warning}", highlight=False, soft_wrap=True)
    page = render_card(found.runs, title=title)
    with staged_files(out, ours=is_card, what=CARD) as staging:
        (staging / out.name).write_text(page, encoding="utf-8")
    lenses = sorted({r.lens for r in found.runs})
    _err.print(f"card with {len(found.runs)} run(s) ({', '.join(lenses)}) written to {out}", highlight=False)
