"""A lens run as its generated command does it: every refusal before any model loads, the runner with the CLI's
display, then the lens's console summary."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from chronoprobe.cli.console import announce, console, print_plain, progress_bar, progress_ticks, task_progress
from chronoprobe.cli.model_options import ModelOptions
from chronoprobe.plugins import blame

if TYPE_CHECKING:
    from chronoprobe.contract.lens import Lens

__all__ = ["claim_run_dir", "run_lens"]


def _click_context() -> Any:
    try:  # recent typer vendors click
        from typer._click.globals import get_current_context
    except ImportError:  # pragma: no cover - depends on the installed typer
        from click import get_current_context  # type: ignore[no-redef]  # older typer: the same function from click itself
    return get_current_context()


def claim_run_dir(lens: Lens[Any], out: Path, cache: Path | None) -> None:
    """Check and lock the run's folder for the rest of the command, before its data is read: one-line ConfigError
    if it cannot be written, holds someone else's files or another kind of report, is or holds or lies inside one
    of the run's inputs (the call cache included), or another run is writing it. The lock goes when the command
    ends, and folders created for it go again if it fails."""
    from chronoprobe.contract.publish import OutputClaim, check_not_input, check_output_dir, check_outside

    lens.check_inputs()  # a wrong input is named before the output is blamed for lying inside it
    check_outside(out, lens.output_paths())
    check_output_dir(out, "--out")  # a user's folder is named as that first; another kind of report after the inputs
    check_not_input(out, [*lens.input_paths(), ("--cache", cache)], "--out")
    _click_context().with_resource(OutputClaim(out, "--out", lens.kind))


def run_lens(lens: Lens[Any], out: Path | None, backend: ModelOptions) -> None:
    """Run ``lens`` on its config's models through the runner, with the CLI's progress bars, model-loading status
    and notices; a live query's progress while its data loads, and the lens's summary
    (:meth:`~chronoprobe.contract.lens.Lens.present`) after."""
    from chronoprobe.contract.runner import default_out, execute
    from chronoprobe.engines import parse_engine

    engine = parse_engine(backend.engine)  # a bad --engine or a missing Ray: one line, before any model loads
    with blame(lens, "failed in check_engine()"):
        lens.check_engine(engine)
    out = out or default_out(lens)
    with blame(lens, "failed in input_paths()"):
        claim_run_dir(lens, out, backend.cache)
    with progress_bar(transient=True) as bar, blame(lens, "failed in load()"):
        lens.load_progress = task_progress(bar)
        lens.load()  # bad data fails before any model loads
    lens.load_progress = None
    if not engine.local:
        console.print(f"engine: {engine.label}", highlight=False)
    result = execute(
        lens,
        out,
        options=backend.backend(),
        cache=backend.cache,
        progress_display=progress_ticks,
        announce=announce,
        engine=engine,
        notice=print_plain,
    )
    with blame(lens, "failed in present()"):
        lines = lens.present(result)
    for line in lines:
        print_plain(line)
    console.print(f"report: {out / 'report.md'}", highlight=False, soft_wrap=True)  # a path is never broken
