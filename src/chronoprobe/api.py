"""The Python API: run a lens, read a run folder back, keep a model loaded between calls.

    import chronoprobe as cp

    run = cp.run("outdated", model="smollm2", limit=20)
    run.summary.headline          # a few numbers per model
    run.to_pandas()               # one row per answer (needs pandas)
    again = cp.load(run.path)     # any run folder, new or old layout

    handle = cp.model("smollm2")  # one load, many uses
    cp.run("recency", model=handle, sample=20)
    cp.recency_gate("What is the ECB's interest rate?", handle)

    result = cp.check("smollm2", budget="quick")   # every lens at a budget's size: chronoprobe check
    result.paragraphs, result.passed, result.runs

    cp.produce("recency.label", questions="new.jsonl", out="labelled.json")  # a command that is not a run

See docs/api.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from chronoprobe.cache import CachedModel, open_cache
from chronoprobe.contract.lens import Lens, ProgressFactory, lens_class, lens_config, lens_names, with_models
from chronoprobe.contract.runlog import Run, load_run
from chronoprobe.contract.runner import default_out, execute, load_models
from chronoprobe.contract.runner import produce as produce_with
from chronoprobe.contract.tool import tool_class, tool_names
from chronoprobe.engines import Engine
from chronoprobe.errors import ConfigError
from chronoprobe.models.registry import DEFAULT_MODEL, BackendOptions, ModelRequest, option_fields, parse_model
from chronoprobe.plugins import blame
from chronoprobe.progress_lines import LOGGER, logged_progress, logged_step, quiet_third_party_output, shown_on_stderr
from chronoprobe.values import config_error

if TYPE_CHECKING:
    from chronoprobe.checkup import CheckResult
    from chronoprobe.reports.compare import CompareRow

__all__ = ["Model", "Run", "check", "compare", "lenses", "load", "model", "produce", "run", "tools"]


class Model(CachedModel):
    """A loaded model behind the call cache, reusable across runs and gate calls (``chronoprobe.model``)."""

    @property
    def spec(self) -> str:
        return self.info.spec

    @property
    def name(self) -> str:
        return self.info.name or self.info.spec

    def __repr__(self) -> str:
        return f"<chronoprobe.Model {self.name} ({self.spec})>"


def _request(handle: Model) -> ModelRequest:
    """What the handle was loaded from: its ``--model`` value, parsed (``NAME=SPEC`` when it was named)."""
    if handle.source is not None:
        return handle.source.request
    return parse_model(f"{handle.info.given_name}={handle.spec}" if handle.info.given_name else handle.spec)


def model(spec: str = DEFAULT_MODEL, *, cache: Path | str | None = None, **options: Any) -> Model:
    """Load ``spec`` once (any form ``chronoprobe models`` lists; ``NAME=SPEC`` names it).

    ``options`` are backend options: dtype, device, batch_size, chat_template, api_mode, concurrency ...
    """
    quiet_third_party_output()
    backend_options = _backend_options(options)
    if options:
        raise ConfigError(
            "model", f"unknown option(s) {', '.join(sorted(options))}; known: {', '.join(sorted(option_fields()))}"
        )
    [loaded] = load_models([spec], backend_options, open_cache(Path(cache) if cache else None))
    return Model(loaded.lazy_backend, loaded.cache, source=loaded.source)


def lenses() -> list[str]:
    """The names :func:`run` accepts: the built-in lenses and those installed as ``chronoprobe.lenses`` entry points."""
    return sorted(lens_names())


def _backend_options(options: dict[str, Any]) -> BackendOptions:
    """Pop the backend options out of ``options`` (what is left belongs to the lens): those a registered backend takes."""
    known = option_fields()
    return BackendOptions(**{k: options.pop(k) for k in list(options) if k in known})


def _config(cls: type[Lens[Any]], models: list[ModelRequest], options: dict[str, Any]) -> BaseModel:
    fields = with_models(cls.config_type).model_fields
    unknown = sorted(set(options) - set(fields))
    if unknown:
        raise ConfigError(
            f"{cls.name} option(s) {', '.join(unknown)}",
            f"unknown; known: {', '.join(sorted(set(fields) | set(option_fields())))}",
        )
    try:
        return lens_config(cls, models, options)
    except ValidationError as exc:  # named by the field, as the command names it by its option
        raise config_error(exc, lambda location: ".".join(map(str, location)) or cls.name) from None


def run(
    lens: str,
    model: str | Model | Sequence[str | Model] = DEFAULT_MODEL,
    *,
    out: Path | str | None = None,
    cache: Path | str | None = None,
    progress: ProgressFactory | bool | None = True,
    engine: str | Engine = "local",
    **options: Any,
) -> Run:
    """Run a lens and return the run (its folder is written like the CLI's, at ``out``).

    ``model``: a spec, a :func:`model` handle, or a list of them (not a mix). ``out``: default
    ``results/<lens>/<model>-<timestamp>``. ``options``: the fields of the lens's config
    (``lens_class(lens).config_type``; docs/api.md lists them per lens) and backend
    options (dtype, device, batch_size ...). ``engine``: where the calls the cache misses run,
    ``local`` (this process), ``ray`` (a Ray cluster started for the run), ``ray:auto`` or
    ``ray:HOST:PORT`` (a running cluster); see docs/scale.md. ``progress``: by default the plan
    line and a progress line at least every 8 s go to the ``chronoprobe.progress`` logger, shown
    on stderr unless the program configured logging (:mod:`chronoprobe.progress_lines`); ``False`` (or
    None) is quiet; a factory ``progress(description, total)`` gets the steps instead.
    """
    quiet_third_party_output()
    cls = lens_class(lens)
    chosen = [model] if isinstance(model, str | Model) else list(model)
    handles = [m for m in chosen if isinstance(m, Model)]
    if handles and len(handles) != len(chosen):
        raise ConfigError("model", "give model specs or chronoprobe.model() handles, not a mix")
    requests = [_request(m) for m in handles] if handles else [parse_model(str(m)) for m in chosen]
    backend_options = _backend_options(options)
    with blame(cls, "failed to take its options"):
        instance = cls(_config(cls, requests, options))
    folder = Path(out) if out is not None else default_out(instance)
    logged = progress is True
    with shown_on_stderr() if logged else nullcontext():
        return execute(
            instance,
            folder,
            models=handles or None,
            options=backend_options,
            cache=Path(cache) if cache else None,
            progress=progress if callable(progress) else None,
            progress_display=logged_progress if logged else None,
            notice=LOGGER.info if logged else None,
            announce=logged_step if logged else None,
            engine=engine,
        )


def tools() -> list[str]:
    """The names :func:`produce` accepts: ``<lens>.<command>`` for every command that is not a lens run."""
    return tool_names()


def produce(
    tool: str,
    *,
    cache: Path | str | None = None,
    progress: ProgressFactory | bool | None = True,
    **options: Any,
) -> Any:
    """Run a tool, the command ``chronoprobe <lens> <command>`` from Python, and return its result.

    ``tool``: one of :func:`tools` (``conflicts.contexts``, ``recency.label``, ``editing.dataset`` ...).
    ``options``: the fields of the tool's config (``chronoprobe.contract.tool.tool_class(tool).config_type``;
    docs/api.md lists them per tool), named as the command's options are with ``-`` as ``_``
    (``editing.dataset``'s ``--from`` is ``from_run``), and for a tool that loads models the backend
    options (dtype, device, batch_size ...; ``engine`` where the command offers ``--engine``). Its output
    is checked, claimed, written and published as the command does it, and refused in the same words.
    ``progress``: as for :func:`run`; notices go to the ``chronoprobe.progress`` logger.
    """
    quiet_third_party_output()
    cls = tool_class(tool)
    backend_options = _backend_options(options) if cls.model_options else BackendOptions()
    offers_engine = cls.model_options and "engine" not in cls.omit_model_options
    engine = str(options.pop("engine", "local")) if offers_engine else "local"
    if isinstance(options.get("out"), str):
        options["out"] = Path(options["out"])
    instance = cls.from_options(**options)
    logged = progress is True
    with shown_on_stderr() if logged else nullcontext():
        return produce_with(
            instance,
            options=backend_options,
            cache=Path(cache) if cache else None,
            progress=progress if callable(progress) else None,
            progress_display=logged_progress if logged else None,
            announce=logged_step if logged else None,
            notice=_plain_notice if logged else None,
            engine=engine,
        )


def _plain_notice(line: str) -> None:
    """A tool's notice (rich markup, for the console) as plain text on the ``chronoprobe.progress`` logger."""
    from rich.text import Text

    LOGGER.info(Text.from_markup(line).plain)


def check(
    model: str | Model | Sequence[str | Model] = DEFAULT_MODEL,
    *,
    budget: str = "quick",
    out: Path | str | None = None,
    cache: Path | str | None = None,
    lenses: Sequence[str] = (),
    live: bool = False,
    snapshot: str | None = None,
    endpoint: str | None = None,
    deployed_at: str | None = None,
    require: Sequence[str] = (),
    strict: bool = False,
    engine: str = "local",
    progress: ProgressFactory | None = None,
    baseline: Path | str | None = None,
    precision: float | None = None,
    allow_different_items: bool = False,
    **options: Any,
) -> CheckResult:
    """Ask ``model`` every registered lens at ``budget``'s size (``quick``, ``standard``, ``full``), as
    ``chronoprobe check`` does: one folder (``out``, default ``results/check/<model>-<timestamp>``) with a
    run folder per lens, ``check.md``, ``check.json`` and ``card.html``.

    ``lenses``: only these (and what they need). ``require``: thresholds
    (``"outdated.soft_constraint_pct.up-to-date >= 40"``), judged on the whole 95% interval unless
    ``strict``; ``result.passed`` says whether all hold. ``baseline``: an earlier check folder to compare with,
    paired (``"outdated.soft_constraint_pct.up-to-date.delta >= -2"`` gates the change); ``precision``: size each
    lens for a 95% interval of that half-width in points. ``options``: backend options (dtype ...).
    A check killed part way resumes when run again with the same ``out``.
    """
    from chronoprobe.checkup.run import CheckRequest
    from chronoprobe.checkup.run import check as run_check
    from chronoprobe.contract.lens import BUDGETS

    chosen = [model] if isinstance(model, str | Model) else list(model)
    handles = [m for m in chosen if isinstance(m, Model)]
    if handles and len(handles) != len(chosen):
        raise ConfigError("model", "give model specs or chronoprobe.model() handles, not a mix")
    if budget not in BUDGETS:
        raise ConfigError("budget", f"{budget!r} is not one of {', '.join(BUDGETS)}")
    backend_options = _backend_options(options)
    if options:
        raise ConfigError(
            "check", f"unknown option(s) {', '.join(sorted(options))}; known: {', '.join(sorted(option_fields()))}"
        )
    request = CheckRequest(
        models=tuple(_request(m) for m in handles) if handles else tuple(parse_model(str(m)) for m in chosen),
        budget=budget,
        out=Path(out) if out is not None else None,
        lenses=tuple(lenses),
        live=live,
        snapshot=snapshot,
        endpoint=endpoint,
        deployed_at=deployed_at,
        require=tuple(require),
        strict=strict,
        cache=Path(cache) if cache else (handles[0].cache.path if handles else None),
        options=backend_options,
        engine=engine,
        baseline=Path(baseline) if baseline is not None else None,
        precision=precision,
        allow_different_items=allow_different_items,
    )
    return run_check(request, handles=handles, progress=progress)


def compare(*folders: Path | str, allow_different_items: bool = False) -> list[CompareRow]:
    """Compare run folders (or check folders) of the same items paired, as ``chronoprobe compare`` does: each later
    folder (B) against each earlier one (A), lens by lens; one folder of a run with two models compares those.

    Returns the rows ``compare --format csv`` writes, typed (:class:`~chronoprobe.reports.compare.CompareRow`:
    ``a``, ``b``, ``delta``, ``ci_low``, ``ci_high``, ``n``, ``p``, ``test``, ``discordant_ab``, ``discordant_ba``
    beside the run, model, lens, dataset, class and metric; ``row.as_dict()`` in the table's columns).
    ``allow_different_items``: compare runs of different snapshots, catalogues or datasets on the items they share.
    """
    result = produce(
        "compare", dirs=tuple(Path(f) for f in folders), allow_different_items=allow_different_items, progress=False
    )
    rows: list[CompareRow] = result.rows
    return rows


load = load_run
"""Read a run folder back: the shared run log (``run.json``) or an older folder's ``summary.json``
(:func:`chronoprobe.contract.runlog.load_run`)."""
