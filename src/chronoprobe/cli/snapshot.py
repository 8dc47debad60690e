"""``chronoprobe snapshot``: list, fetch, compare and inspect gold-answer snapshots.

The views and the fetch are :mod:`chronoprobe.knowledge.snapshot_views`'; the commands take the options
and draw the tables.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from chronoprobe.cli.options import check_endpoint, check_snapshot_name, check_snapshot_ref
from chronoprobe.cli.progress_display import console, progress_ticks
from chronoprobe.knowledge.snapshot_views import (
    diff_view,
    fact_view,
    fetch_snapshot,
    listing_view,
    snapshot_view,
)
from chronoprobe.knowledge.wikidata import WDQS_ENDPOINT
from chronoprobe.tables import TableView

app = typer.Typer(
    help="Pinned Wikidata answer snapshots for the outdated audit: list, fetch live, diff, show.",
    no_args_is_help=True,
)
out = Console()


def _draw(view: TableView) -> None:
    """A view as one rich table on stdout, then its closing lines."""
    out.print(view.rich())
    for line in view.after:
        out.print(line, highlight=False)


@app.command("list")
def list_command() -> None:
    """List the snapshots available by name (yours and the shipped ones)."""
    _draw(listing_view())


@app.command("fetch")
def fetch_command(
    endpoint: Annotated[
        str, typer.Option(help="SPARQL endpoint (WDQS or a compatible mirror).", callback=check_endpoint)
    ] = WDQS_ENDPOINT,
    catalogue: Annotated[
        Path | None, typer.Option(help="Fact catalogue JSON (default: the shipped DyKnow one).")
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N facts.")] = None,
    name: Annotated[
        str | None, typer.Option(help="Snapshot name (default: wikidata-<today>).", callback=check_snapshot_name)
    ] = None,
    timeout: Annotated[float, typer.Option(min=1.0, help="Seconds per request.")] = 30.0,
    output_dir: Annotated[
        Path | None, typer.Option(help="Where to save (default: the user snapshot directory).")
    ] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Overwrite an existing snapshot of the same name.")
    ] = False,
) -> None:
    """Query Wikidata now for every fact of the catalogue and save a new snapshot.

    A mostly empty answer (fewer than half of the facts with a dated statement)
    is an error and saves nothing; an existing snapshot is kept unless --replace.
    """
    snapshot, path = fetch_snapshot(
        endpoint=endpoint,
        catalogue=catalogue,
        limit=limit,
        name=name,
        timeout=timeout,
        output_dir=output_dir,
        replace=replace,
        progress_display=functools.partial(progress_ticks, transient=True),
    )
    statements = sum(len(a.statements) for a in snapshot.answers.values())
    console.print(f"saved {len(snapshot.answers)} facts ({statements} dated statements) to {path}")
    for fact_id, warning in snapshot.warnings.items():
        console.print(f"[yellow]warning[/] {fact_id}: {warning}", highlight=False)


@app.command("diff")
def diff_command(
    old: Annotated[
        str, typer.Argument(metavar="OLD", help="Older snapshot (name or file).", callback=check_snapshot_ref)
    ],
    new: Annotated[
        str, typer.Argument(metavar="NEW", help="Newer snapshot (name or file).", callback=check_snapshot_ref)
    ],
    statements: Annotated[bool, typer.Option("--statements", help="Also list added/removed statements.")] = False,
) -> None:
    """Show which facts' current answers changed between two snapshots."""
    _draw(diff_view(old, new, statements=statements))


@app.command("show")
def show_command(
    name: Annotated[
        str | None,
        typer.Argument(
            metavar="SNAPSHOT", help="Snapshot name or file (default: the shipped one).", callback=check_snapshot_ref
        ),
    ] = None,
    fact: Annotated[str | None, typer.Option(help="Show every statement of this fact id.")] = None,
) -> None:
    """Show a snapshot's current answers, or all statements of one fact."""
    _draw(snapshot_view(name) if fact is None else fact_view(name, fact))
