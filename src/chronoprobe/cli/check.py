"""``chronoprobe check``: every lens at a budget's size, one folder, one answer, a gate for CI.

A thin shell over :mod:`chronoprobe.checkup`: options in, plan lines and results out. Exit 0 when
every ``--require`` holds, 1 when one fails (one line each), 2 for a bad threshold or any other
user error, before any model loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from chronoprobe.cli.model_options import DEFAULT_MODEL_OPTIONS, ModelOptions, with_model_options
from chronoprobe.cli.options import DeployedAtOpt, ModelOpt, SnapshotOpt, check_endpoint, choice
from chronoprobe.cli.progress_display import console, progress_ticks
from chronoprobe.lens import BUDGETS
from chronoprobe.models.registry import DEFAULT_MODEL, parse_model

if TYPE_CHECKING:
    from chronoprobe.checkup import CheckResult


BudgetOpt = Annotated[
    str,
    typer.Option(
        help="quick (SmolLM2 on 2 CPU cores: 4 min at load 2, 7 min at load 5), standard (44 min at load 5), "
        "full (the papers' runs; hours). docs/check.md gives each one's sizes and times.",
        callback=choice(BUDGETS),
    ),
]
RequireOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--require",
        help="A threshold, 'LENS.METRIC[.CLASS] OP VALUE' with the metric as `chronoprobe results` names it "
        "(class all unless named), e.g. 'outdated.soft_constraint_pct.up-to-date >= 40' (repeatable). It "
        "fails only when the whole 95% interval misses it (--strict: the point value). Exit 1 if one fails.",
    ),
]


CheckOutOpt = Annotated[
    Path | None,
    typer.Option(
        help="Where to write the check folder (default: a new results/check/<model>-<timestamp>). The same folder "
        "again resumes: lenses that finished with the same settings are kept."
    ),
]
LensOpt = Annotated[
    list[str] | None,
    typer.Option("--lens", help="Only this lens (repeatable; the lenses it needs run too). Default: every lens."),
]


@with_model_options()
def check(
    model: ModelOpt = None,
    budget: BudgetOpt = "quick",
    out: CheckOutOpt = None,
    lens: LensOpt = None,
    live: Annotated[
        bool, typer.Option("--live", help="Judge against today's answers (queries --endpoint; saves a snapshot).")
    ] = False,
    snapshot: SnapshotOpt = None,
    endpoint: Annotated[
        str | None,
        typer.Option(help="SPARQL endpoint for --live (default: the Wikidata Query Service).", callback=check_endpoint),
    ] = None,
    deployed_at: DeployedAtOpt = None,
    require: RequireOpt = None,
    strict: Annotated[bool, typer.Option("--strict", help="Compare thresholds with point values.")] = False,
    junit: Annotated[
        Path | None, typer.Option(help="Write a JUnit XML file: one test case per threshold and per lens.")
    ] = None,
    backend: ModelOptions = DEFAULT_MODEL_OPTIONS,
) -> None:
    """Ask a model every question at once: each lens at the budget's size, one folder, a paragraph per model."""
    from chronoprobe.checkup.junit import JUNIT, is_our_junit
    from chronoprobe.checkup.plan import plan_line, total_line
    from chronoprobe.checkup.run import CheckRequest, default_check_out, plan, prepare, run_prepared
    from chronoprobe.publish import check_output_file, check_outside

    request = CheckRequest(
        models=tuple(parse_model(m) for m in model or (DEFAULT_MODEL,)),
        budget=budget,  # type: ignore[arg-type]  # --budget's callback allows only BUDGETS
        out=out,
        lenses=tuple(lens or ()),
        live=live,
        snapshot=snapshot,
        endpoint=endpoint,
        deployed_at=deployed_at,
        require=tuple(require or ()),
        strict=strict,
        cache=backend.cache,
        options=backend.backend(),
        engine=backend.engine,
    )
    folder = out or default_check_out(request.models)
    if junit is not None:
        check_output_file(junit, "--junit", ours=is_our_junit, what=JUNIT)
        check_outside(folder, [("--junit", junit)])
    prepared = prepare(request, folder)  # bad thresholds, sizes or folders: exit 2, no model loaded
    for line in plan(prepared):
        console.print(plan_line(line), highlight=False, markup=False, soft_wrap=True)
    console.print(total_line(prepared.plans), highlight=False, markup=False, soft_wrap=True)
    result = run_prepared(
        prepared,
        say=lambda line: console.print(line, highlight=False, markup=False, soft_wrap=True),
        progress_display=progress_ticks,
        announce=console.status,
    )
    _show(result, junit, folder)


def _show(result: CheckResult, junit: Path | None, folder: Path) -> None:
    """The paragraph per model, each threshold's verdict, the JUnit file; exit 1 when a threshold fails."""
    for line in result.lines():
        console.print(line, highlight=False, soft_wrap=True)
    if junit is not None:
        result.write_junit(junit)
        console.print(f"JUnit: {junit}", highlight=False)
    console.print(f"check: {folder / 'check.md'}  card: {folder / 'card.html'}", highlight=False, soft_wrap=True)
    if not result.passed:
        raise typer.Exit(1)
