"""The one runner: every command's pre-flight, then its stages, its output claimed and published whole.

Every command is a :class:`~chronoprobe.contract.tool.Tool`: a lens run too
(:class:`~chronoprobe.contract.lens_run.LensRun`, whose output is the lens's result folder).
:func:`produce` drives one for the CLI, ``chronoprobe.run``, ``chronoprobe.produce`` and ``chronoprobe.check``
alike: the engine checked, then :func:`preflight` (inputs, engine, model options, the output against every
input and the call cache: each once, before any data is read or any model loads), the output claimed,
the data loaded, the work run, the output staged and swapped in whole (:mod:`chronoprobe.records.publish`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.contract.lens import Announce
from chronoprobe.contract.tool import RunSettings, Tool, ToolContext
from chronoprobe.engines import ModelSource
from chronoprobe.errors import CacheUnavailable, ConfigError
from chronoprobe.models.base import Backend
from chronoprobe.models.lazy import open_backend
from chronoprobe.models.names import check_distinct, file_safe, unique_names
from chronoprobe.models.registry import (
    BackendOptions,
    ModelRequest,
    check_options,
    default_models,
    load_backend,
    parse_model,
)
from chronoprobe.paths import RUN_STAMP, default_call_cache
from chronoprobe.records.publish import Output
from chronoprobe.records.runlog import ITEMS, RUN_FORMAT, RUN_LOG, Run
from chronoprobe.renames import warn_deprecated
from chronoprobe.version import SHIMS_REMOVED_IN

ResultT = TypeVar("ResultT")

__all__ = [
    "ITEMS",
    "RUN_FORMAT",
    "RUN_LOG",
    "Run",
    "default_folder",
    "load_models",
    "named_folder",
    "preflight",
    "produce",
    "run_tool",
]


def load_models(
    requests: Sequence[str | ModelRequest] | None,
    options: BackendOptions,
    cache: CallCache,
    announce: Announce | None = None,
    *,
    checked: Collection[ModelRequest] = (),
) -> list[CachedModel]:
    """Load every requested model (the embedded default if none) behind the cache, with distinct short names.

    A text is parsed here (a helper's spec); a request's backend options are checked here unless it is one of
    ``checked`` (the pre-flight's), every one before any loads."""
    chosen = [parse_model(r) for r in requests or default_models()]
    check_distinct(chosen)  # two models shown by one name: refused, never told apart as "a (2)"
    for request in chosen:  # with the options it is given: a bad second one fails before any load
        if not any(request is done for done in checked):
            check_options(request, options)
    models = []
    for request in chosen:  # NAME=SPEC: the name is for people, never in cache keys
        # announced where it really loads: here, or (a remembered local model) on its first cache miss, mid-run
        backend = open_backend(request, options, cache, _announced(load_backend, announce or _quiet))
        backend.info.name = request.display_name
        backend.info.given_name = request.name
        models.append(CachedModel(backend, cache, source=ModelSource(request=request, options=options)))
    for model, name in zip(models, unique_names(m.info.name or m.info.spec for m in models), strict=True):
        model.info.name = name
        if model.info.given_name is not None:  # two models given one name: "a", "a (2)" everywhere
            model.info.given_name = name
    return models


def _quiet(message: str) -> AbstractContextManager[None]:
    return nullcontext()


def _announced(
    load: Callable[[ModelRequest, BackendOptions], Backend], announce: Announce
) -> Callable[[ModelRequest, BackendOptions], Backend]:
    """``load`` inside ``announce("loading <spec>")``: off a terminal, a line once it has taken a few seconds and
    one when it is done, with its time (:func:`chronoprobe.progress_bars.announce`)."""

    def loading(request: ModelRequest, options: BackendOptions) -> Backend:
        with announce(f"loading {request.spec.raw}"):
            return load(request, options)

    return loading


def default_folder(
    folder: Path, label: str, models: Sequence[ModelRequest] | None, *, now: dt.datetime | None = None
) -> Path:
    """``<folder>/<model><label>-<timestamp>``: one new folder per run, so nothing is replaced silently.

    ``models``: the run's, parsed (none: the embedded default). The timestamp is UTC to the second; a folder
    that already exists gets ``-2``, ``-3`` ... A model part longer than 80 characters is cut and ends in a
    hash of the whole."""
    return named_folder(folder, label, [m.display_name for m in (models or default_models())], now=now)


def named_folder(folder: Path, label: str, names: Sequence[str], *, now: dt.datetime | None = None) -> Path:
    """:func:`default_folder` for models known by the names a run recorded (a short name, not a spec to parse)."""
    model_part = file_safe("+".join(dict.fromkeys(file_safe(name) for name in names)))  # long: cut, with a hash
    stamp = (now or dt.datetime.now(dt.UTC)).strftime(RUN_STAMP)
    base = f"{model_part}{label}-{stamp}"
    candidate, count = folder / base, 1
    while candidate.exists():
        count += 1
        candidate = folder / f"{base}-{count}"
    return candidate


def produce(tool: Tool[ResultT], settings: RunSettings | None = None, **older: Any) -> ResultT:
    """Run ``tool`` and publish what it writes; returns its result (see :mod:`chronoprobe.contract.tool` for the stages).

    ``settings`` (:class:`~chronoprobe.contract.tool.RunSettings`; default: the user's call cache, the local engine,
    nothing shown) say how its models load and its work shows. Its engine (``local``, ``ray``, ``ray:auto``,
    ``ray:HOST:PORT`` or an :class:`~chronoprobe.engines.Engine`) is parsed and checked first (a head that does not
    answer: one line, before anything else); then the pre-flight (:func:`preflight`), and the stages. The settings'
    ``progress_display`` (the CLI's bar) is opened only while the models run, after ``announce`` has shown each
    model load; ``load_display`` while the data loads (a live query's progress); ``notice`` gets the lines the user
    should read before the work goes on (a lens's notices and plan line), ``progress`` the steps when no display is
    given. ``older``: the settings as keywords, as 0.2.0 took them, until 0.4.0.
    """
    context = ToolContext(load_models, _older_keywords(settings, older) if older else settings)
    context.engine.check()
    return run_tool(tool, context)


def _older_keywords(settings: RunSettings | None, older: dict[str, Any]) -> RunSettings:
    """0.2.0's ``produce(tool, cache=..., options=..., engine=...)``: the fields of :class:`RunSettings` as keywords,
    still taken until 0.4.0, with a DeprecationWarning."""
    known = {field.name for field in fields(RunSettings)}
    unknown = sorted(set(older) - known)
    if unknown:
        raise TypeError(f"produce() got unexpected keyword argument(s) {', '.join(unknown)}")
    if settings is not None:
        raise ConfigError("settings", f"give settings or {', '.join(sorted(older))}, not both")
    warn_deprecated(
        f"produce()'s keywords {', '.join(sorted(older))} are deprecated and removed in {SHIMS_REMOVED_IN}; "
        "pass RunSettings(...)"
    )
    return RunSettings(**older)


def run_tool(tool: Tool[ResultT], context: ToolContext) -> ResultT:
    """:func:`produce` once the engine is checked: the pre-flight, then the output claimed for the rest, the data
    loaded, the work run and the output published whole. (``chronoprobe check`` runs each lens so, with the
    check's context.)"""
    output = preflight(tool, context)
    try:
        with output.claim() if output is not None else nullcontext():
            _load(tool, context)
            result = tool.run(context)
            if output is not None:
                with output.staged() as folder:
                    tool.write(folder, result)
    except CacheUnavailable as exc:
        if output is not None:  # the outermost run's folder wins: a check's, not its lens's
            exc.resume = (output.option, str(output.path))
        raise
    return result


def preflight(tool: Tool[ResultT], context: ToolContext) -> Output | None:
    """Every refusal a command makes before it reads its data or loads a model, each once: its inputs
    (:meth:`~chronoprobe.contract.tool.Tool.check_inputs`), its engine, its models' names (distinct) and backend
    options, and its output against every input, the call cache included. Returns the output to claim."""
    tool.check_inputs()
    tool.check_engine(context.engine)
    requested = tool.requested_models()
    check_distinct(requested)  # two models shown by one name: refused, never told apart as "a (2)"
    for request in requested:
        check_options(request, context.options)
    context.checked = requested
    output = tool.output()
    if output is not None:
        cache = [("--cache", context.cache_path or default_call_cache())] if tool.model_options else []
        output.check([*tool.input_paths(), *cache])
    return output


def _load(tool: Tool[ResultT], context: ToolContext) -> None:
    """``tool.load()``, with the context's load display shown on ``tool.load_progress`` while it runs."""
    display = context.settings.load_display
    with display() if display is not None else nullcontext(None) as shown:
        tool.load_progress = shown
        try:
            tool.load()
        finally:
            tool.load_progress = None
