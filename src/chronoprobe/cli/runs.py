"""Running a command's work: claiming its output, loading its models, and a lens run with the CLI's display."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.cache import open_cache as open_cache  # the commands import it from here
from chronoprobe.cli.model_options import ModelOptions
from chronoprobe.cli.progress_display import announce, console, print_plain, progress_bar, progress_ticks, task_progress
from chronoprobe.models.registry import BackendOptions, ModelRequest
from chronoprobe.plugins import blame

if TYPE_CHECKING:
    from chronoprobe.lens import Lens
    from chronoprobe.publish import Inputs
    from chronoprobe.runner import RunResult


def _click_context() -> object | None:
    try:  # recent typer vendors click
        from typer._click.globals import get_current_context
    except ImportError:  # pragma: no cover - depends on the installed typer
        from click import get_current_context  # type: ignore[no-redef]  # older typer: the same function from click itself
    return get_current_context(silent=True)


def claim_output_dir(path: Path, option: str = "--out", *, kind: str | None = None, inputs: Inputs = ()) -> None:
    """Check and lock a results folder for the rest of this command, before any model loads.

    One-line ConfigError if the path cannot be written, holds someone else's files or another
    ``kind`` of report, is or holds or lies inside one of ``inputs``, or another run is writing
    it. The lock is released when the command ends; folders created for it go again if it fails.
    """
    from chronoprobe.publish import OutputClaim, check_not_input, check_output_dir

    check_output_dir(path, option)  # a user's folder is named as that first; another kind of report after the inputs
    check_not_input(path, inputs, option)
    claim = OutputClaim(path, option, kind)
    context = _click_context()
    if context is None:  # called outside a command (library use): hold it until exit
        import atexit

        claim.__enter__()
        atexit.register(claim.__exit__, None, None, None)
    else:
        context.with_resource(claim)  # type: ignore[attr-defined]  # a click Context, typed object to fit click and typer's copy alike


def claim_run_dir(lens: Lens[Any], out: Path, cache: Path | None, *extra: tuple[str, Path | None]) -> None:
    """``claim_output_dir`` for a lens run: its kind, and every path it reads (the call cache included)."""
    from chronoprobe.publish import check_outside

    lens.check_inputs()  # a wrong input is named before the output is blamed for lying inside it
    check_outside(out, lens.output_paths())
    claim_output_dir(out, kind=lens.kind, inputs=[*lens.input_paths(), ("--cache", cache), *extra])


def load_models(
    specs: Sequence[str | ModelRequest] | None, options: BackendOptions, cache: CallCache
) -> list[CachedModel]:
    """Load every requested model (the embedded default if none) behind the cache, with a spinner."""
    from chronoprobe import runner

    return runner.load_models(specs, options, cache, announce=announce)


def run_in_terminal(lens: Lens[Any], out: Path, backend: ModelOptions) -> RunResult:
    """Run ``lens`` on its models (its config's ``models``) through the runner, with the CLI's progress bars,
    model-loading status and notices."""
    from chronoprobe.engines import parse_engine
    from chronoprobe.runner import execute

    chosen = parse_engine(backend.engine)  # a bad --engine or a missing Ray: one line, before any model loads
    if not chosen.local:
        console.print(f"engine: {chosen.label}", highlight=False)

    return execute(
        lens,
        out,
        options=backend.backend(),
        cache=backend.cache,
        progress_display=progress_ticks,
        announce=announce,
        engine=chosen,
        notice=print_plain,
    )


def run_lens(lens: Lens[Any], out: Path | None, backend: ModelOptions) -> None:
    """A lens run as its generated command does it (on its config's models): every refusal before any model
    loads, then the runner, then the lens's console summary (:meth:`~chronoprobe.lens.Lens.present`)."""
    from chronoprobe.engines import parse_engine
    from chronoprobe.runner import default_out

    with blame(lens, "failed in check_engine()"):
        lens.check_engine(parse_engine(backend.engine))
    out = out or default_out(lens)
    with blame(lens, "failed in input_paths()"):
        claim_run_dir(lens, out, backend.cache)  # checked and locked before any model loads
    with progress_bar(transient=True) as bar, blame(lens, "failed in load()"):
        lens.load_progress = task_progress(bar)
        lens.load()  # bad data fails before any model loads
    lens.load_progress = None
    result = run_in_terminal(lens, out, backend)
    with blame(lens, "failed in present()"):
        lines = lens.present(result)
    for line in lines:
        print_plain(line)
    console.print(f"report: {out / 'report.md'}", highlight=False)


__all__ = [
    "claim_output_dir",
    "claim_run_dir",
    "load_models",
    "open_cache",
    "run_in_terminal",
    "run_lens",
]
