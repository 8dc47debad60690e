"""``chronoprobe catalogue``: build a fact catalogue and its snapshot from Wikidata property templates.

A thin layer over :mod:`chronoprobe.knowledge.catalogue_build` and
:mod:`chronoprobe.knowledge.templates`, where the validation lives.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from chronoprobe.cli.deprecated import with_deprecated
from chronoprobe.cli.options import check_as_of, check_endpoint
from chronoprobe.cli.progress_display import console, progress_bar
from chronoprobe.knowledge.wikidata import WDQS_ENDPOINT
from chronoprobe.progress_bars import named_progress

app = typer.Typer(
    help="Build fact catalogues from Wikidata property templates: build, list the templates, report a build.",
    no_args_is_help=True,
)
tables = Console()


@app.command("build")
@with_deprecated({"--limit": "--per-template"})
def build_command(
    out_dir: Annotated[
        Path,
        typer.Option(
            "--out", help="Where to write the build folder: catalogue.json, snapshot.json, report.json, pages/."
        ),
    ],
    templates: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="TEMPLATE", help="Shipped template names or .toml files (default: the whole shipped set)."
        ),
    ] = None,
    endpoint: Annotated[
        str, typer.Option(help="SPARQL endpoint (WDQS, a mirror, or the stand-in).", callback=check_endpoint)
    ] = WDQS_ENDPOINT,
    as_of: Annotated[
        str | None,
        typer.Option(help="Read every history as it stood on this date (YYYY-MM-DD).", callback=check_as_of),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--per-template", min=1, help="At most N subjects (facts) asked per template.")
    ] = None,
    timeout: Annotated[float, typer.Option(min=1.0, help="Seconds per request.")] = 60.0,
) -> None:
    """Query the endpoint page by page and write a catalogue, a snapshot and a report; a rerun resumes."""
    from chronoprobe.knowledge.catalogue_build import build_catalogue, build_lines
    from chronoprobe.knowledge.templates import resolve_templates

    chosen = resolve_templates(templates or [])
    with progress_bar(transient=True) as bar:
        report = build_catalogue(
            chosen,
            out_dir,
            endpoint=endpoint,
            as_of=dt.date.fromisoformat(as_of) if as_of else None,
            limit=limit,
            timeout_s=timeout,
            progress=named_progress(bar),
        )
    for line in build_lines(report, out_dir, len(chosen)):
        console.print(line, highlight=False)


@app.command("templates")
def templates_command() -> None:
    """List the shipped templates: what each selects and how many facts it gave on the stand-in."""
    from chronoprobe.knowledge.templates import shipped_dir, shipped_templates

    for template in shipped_templates():
        stand_in = "" if template.stand_in_facts is None else f", {template.stand_in_facts} facts on the stand-in"
        tables.print(f"[bold]{template.name}[/] ({template.property}, category {template.category}{stand_in})")
        tables.print(f"  {template.description}", highlight=False, markup=False)
    tables.print(
        f"files: {shipped_dir()}; build them all with `chronoprobe catalogue build --out DIR`, "
        "or some: `chronoprobe catalogue build NAME... --out DIR`",
        highlight=False,
        markup=False,
    )


@app.command("report")
def report_command(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="A build folder (catalogue build --out).")],
) -> None:
    """Per template: subjects asked, facts kept, DyKnow facts merged, and why the others were refused."""
    from chronoprobe.knowledge.catalogue_build import report_view

    view = report_view(folder)
    tables.print(view.rich())
    for line in view.after:
        tables.print(line, highlight=False)
