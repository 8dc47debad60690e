"""One runner for every lens: load models, run, summarise, record provenance, stage and publish.

Every run folder holds the run log shared by all lenses (:mod:`chronoprobe.contract.runlog`: ``run.json``
with the metric records, ``items.jsonl``), the lens's report and plots, and each lens's historical
files (``summary.json``, ``responses.jsonl`` ...). The folder is built in a staging folder and
swapped in whole (:mod:`chronoprobe.contract.publish`).

:func:`produce` drives a :class:`~chronoprobe.contract.tool.Tool` (a command that is not a lens run) the
same way: inputs checked, its output checked and claimed before any model loads, then staged.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, TypeVar

from chronoprobe.cache import AnswerTally, CachedModel, CallCache, open_cache
from chronoprobe.contract import publish
from chronoprobe.contract.lens import Announce, Lens, ModelLoader, ProgressFactory
from chronoprobe.contract.power import power_lines
from chronoprobe.contract.runlog import ITEMS, RUN_FORMAT, RUN_LOG, Run, write_run_log
from chronoprobe.contract.tool import Tool, ToolContext
from chronoprobe.engines import Engine, ModelSource, parse_engine
from chronoprobe.models.base import Backend
from chronoprobe.models.lazy import open_backend
from chronoprobe.models.registry import (
    BackendOptions,
    ModelRequest,
    check_options,
    default_models,
    load_backend,
    parse_model,
)
from chronoprobe.paths import default_call_cache
from chronoprobe.plugins import blame
from chronoprobe.provenance import build_provenance

ResultT = TypeVar("ResultT")

__all__ = [
    "ITEMS",
    "RUN_FORMAT",
    "RUN_LOG",
    "Run",
    "RunResult",
    "default_folder",
    "default_out",
    "execute",
    "load_models",
    "named_folder",
    "open_cache",
    "produce",
]


def load_models(
    requests: Sequence[str | ModelRequest] | None,
    options: BackendOptions,
    cache: CallCache,
    announce: Announce | None = None,
) -> list[CachedModel]:
    """Load every requested model (the embedded default if none) behind the cache, with distinct short names."""
    from chronoprobe.models.names import check_distinct, unique_names

    chosen = [parse_model(r) for r in requests or default_models()]  # every name and spec checked before any load
    check_distinct(chosen)  # two models shown by one name: refused, never told apart as "a (2)"
    for request in chosen:  # with the options it is given: a bad second one fails before any load
        check_options(request, options)
    models = []
    for request in chosen:  # NAME=SPEC: the name is for people, never in cache keys
        # announced where it really loads: here, or (a remembered local model) on its first cache miss, mid-run
        loader = _announced(load_backend, announce or _quiet)
        backend = open_backend(request, options, cache, loader)
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
    """``load`` inside ``announce("loading <spec>")``: off a terminal, a line once it has taken a second and one
    when it is done, with its time (:func:`chronoprobe.progress_bars.announce`)."""

    def loading(request: ModelRequest, options: BackendOptions) -> Backend:
        with announce(f"loading {request.spec.raw}"):
            return load(request, options)

    return loading


def _tell_notices(lens: Lens[Any], notice: Callable[[str], None]) -> None:
    """The lens's notices, before any model loads."""
    with blame(lens, "failed in notices()"):
        lines = lens.notices()
    for line in lines:
        notice(line)


def _tell_plan(lens: Lens[Any], cache: CallCache, notice: Callable[[str], None]) -> None:
    """The lens's plan line, once nothing can refuse the run any more (a model spec only its loader can refuse
    stays one error line) and before its first call: for a model the cache remembers, before it loads."""
    with blame(lens, "failed in plan_line()"):
        plan = lens.plan_line(cache)
    if plan:
        notice(plan)


def default_out(
    lens: Lens[Any],
    models: Sequence[str | ModelRequest] | None = None,
    root: Path = Path("results"),
    *,
    now: dt.datetime | None = None,
) -> Path:
    """``results/<lens>/<model>-<timestamp>``: one new folder per run, so nothing is replaced silently.

    ``models``: the run's models (default: the lens's own, :attr:`Lens.models`). The timestamp is UTC
    to the second; a folder that already exists gets ``-2``, ``-3`` ... A model part longer than 80
    characters is cut and ends in a hash of the whole.
    """
    with blame(lens, "failed in default_folder()"):
        folder = root / lens.default_folder()
    with blame(lens, "failed in run_label()"):
        label = lens.run_label()
    return default_folder(folder, label, models if models is not None else lens.models, now=now)


def default_folder(
    folder: Path, label: str, models: Sequence[str | ModelRequest] | None, *, now: dt.datetime | None = None
) -> Path:
    """``<folder>/<model><label>-<timestamp>``, a new name (``-2``, ``-3`` ... when taken); see :func:`default_out`."""
    names = [parse_model(m).display_name for m in (models or default_models())]
    return named_folder(folder, label, names, now=now)


def named_folder(folder: Path, label: str, names: Sequence[str], *, now: dt.datetime | None = None) -> Path:
    """:func:`default_folder` for models known by the names a run recorded (a short name, not a spec to parse)."""
    from chronoprobe.models.names import file_safe

    model_part = file_safe("+".join(dict.fromkeys(file_safe(name) for name in names)))  # long: cut, with a hash
    stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%dT%H%M%SZ")
    base = f"{model_part}{label}-{stamp}"
    candidate, count = folder / base, 1
    while candidate.exists():
        count += 1
        candidate = folder / f"{base}-{count}"
    return candidate


RunResult = Run
"""What a finished run returns: the same :class:`~chronoprobe.contract.runlog.Run` that ``chronoprobe.load`` reads back."""


def execute(
    lens: Lens[Any],
    out: Path,
    *,
    models: Sequence[CachedModel] | None = None,
    options: BackendOptions | None = None,
    cache: Path | None = None,
    progress: ProgressFactory | None = None,
    progress_display: Callable[[], AbstractContextManager[ProgressFactory]] | None = None,
    announce: Announce | None = None,
    engine: str | Engine | None = None,
    notice: Callable[[str], None] | None = None,
) -> RunResult:
    """Run ``lens`` on its models and publish its folder at ``out``.

    The models are the lens's own (:attr:`Lens.models`: its config's ``models``), loaded with
    ``options``; ``models`` gives them already loaded instead (``chronoprobe.model()`` handles).

    The lens's items are loaded and ``out`` is claimed before any model loads, so bad data or an
    unusable folder fails fast. A lens whose ``load`` already ran (the CLI loads first to show
    a live query's progress) is not loaded twice. ``progress_display`` (the CLI's bar) is opened only while the
    models run, after ``announce`` has shown each model load. ``engine`` (``local``, ``ray``,
    ``ray:auto``, ``ray:HOST:PORT`` or an :class:`~chronoprobe.engines.Engine`) runs the calls the
    cache misses; it is checked and connected before any model loads. ``notice`` gets the lens's
    notices (:meth:`Lens.notices`), once the items are loaded and before any model loads, and its plan
    line (:meth:`Lens.plan_line`: what the run will do and how long it may take) once the models are
    open and checked, before the first call (a model the call cache remembers loads only then). Helper models
    a lens loads in ``setup`` get the same backend ``options`` as the run's models.
    """
    chosen_engine = parse_engine(engine)
    chosen_engine.check()
    if any(not isinstance(m, CachedModel) for m in models or []):
        raise TypeError("models: loaded models only; the specs to load are the lens config's models")
    with blame(lens, "failed in check_engine()"):
        lens.check_engine(chosen_engine)
    loaded_caches = [m.cache.path for m in models or []]
    cache_path = loaded_caches[0] if loaded_caches else (cache or default_call_cache())
    lens.check_inputs()
    publish.check_output_dir(out)
    with blame(lens, "failed in input_paths()"):
        inputs, outputs = lens.input_paths(), lens.output_paths()
    publish.check_not_input(out, [*inputs, ("--cache", cache_path)])
    publish.check_outside(out, outputs)
    with publish.OutputClaim(out, kind=lens.kind):  # shared with an earlier claim of this command
        if not lens.loaded:
            with blame(lens, "failed in load()"):
                lens.load()
        started = time.perf_counter()
        loaded = list(models or [])
        call_cache = loaded[0].cache if loaded else open_cache(cache)
        if notice is not None:
            _tell_notices(lens, notice)
        with blame(lens, "failed in template_as_of()"):  # the day a chat template is told (models/chat_dates.py)
            backend_options = (options or BackendOptions()).told(lens.template_as_of())
        helpers = ModelLoader(
            backend_options, lambda spec: load_models([spec], backend_options, call_cache, announce)[0], announce
        )
        with blame(lens, "failed in setup()"):
            lens.setup(call_cache, helpers)
        chosen_engine.start()
        try:
            if not loaded:
                loaded = load_models(lens.models, backend_options, call_cache, announce)
            for model in loaded:
                with blame(lens, "failed in check()"):
                    lens.check(model, chosen_engine)
                model.tally = AnswerTally()  # the provenance counts this run's answers
            if notice is not None:
                _tell_plan(lens, call_cache, notice)
                for line in power_lines(lens, call_cache):
                    notice(line)
            earlier = [model.engine for model in loaded]
            rows: list[Any] = []
            try:
                for model in loaded:
                    model.engine = chosen_engine
                with progress_display() if progress_display else nullcontext(progress) as ticks:
                    for model in loaded:
                        with blame(lens, "failed in run()"):
                            rows.extend(lens.run(model, ticks))
            finally:  # a chronoprobe.model() handle keeps its own engine after the run
                for model, before in zip(loaded, earlier, strict=True):
                    model.engine = before
        finally:
            chosen_engine.stop()
        with blame(lens, "failed in summarise()"):
            summary = lens.summarise(loaded, rows)
        with blame(lens, "failed in recipe()"):
            recipe = lens.recipe()
        provenance = build_provenance(
            loaded,
            decoding=recipe.decoding,
            seeds=recipe.seeds,
            snapshot=recipe.snapshot,
            judge=recipe.judge,
            extra=recipe.extra,
            started=started,
            call_cache=call_cache.path,
            # results are the local engine's; where they ran is still worth a line
            engine=None if chosen_engine.local else chosen_engine.label,
        )
        with blame(lens, "failed in dataset_label()"):
            summary.dataset = summary.dataset or lens.dataset_label(summary, provenance)
        with publish.staged(out, lens.kind) as folder:
            with blame(lens, "failed in report()"):
                lens.report(folder, rows, summary, provenance)
            write_run_log(
                folder,
                lens=lens.name,
                kind=lens.kind,
                config=lens.config,  # recorded without a key in a model URL
                summary=summary,
                provenance=provenance,
                rows=rows,
            )
    return Run(Path(out), lens.name, summary, kind=lens.kind, config=lens.config, provenance=provenance, rows=rows)


def produce(
    tool: Tool[ResultT],
    *,
    options: BackendOptions | None = None,
    cache: Path | None = None,
    progress: ProgressFactory | None = None,
    progress_display: Callable[[], AbstractContextManager[ProgressFactory]] | None = None,
    announce: Announce | None = None,
    notice: Callable[[str], None] | None = None,
    engine: str = "local",
) -> ResultT:
    """Run ``tool`` and publish what it writes; returns its result (see :mod:`chronoprobe.contract.tool` for the stages).

    Its inputs are checked and its output is checked against them (the call cache included, for a
    tool that loads models) and claimed before its data is read, and the data before any model
    loads; the output is published whole when the tool has written it, or not at all.
    ``progress_display``, ``announce``, ``notice`` and ``engine`` are :func:`execute`'s (a tool that runs
    lenses passes ``engine`` on; :attr:`ToolContext.engine`).
    """
    tool.check_inputs()
    output = tool.output()
    inputs: list[tuple[str, Path | None]] = list(tool.input_paths())
    if tool.model_options:
        inputs.append(("--cache", cache))
    if output is not None:
        output.check(inputs)
    with output.claim() if output is not None else nullcontext():
        tool.load()
        context = ToolContext(
            load_models=load_models,
            options=options,
            cache=cache,
            progress=progress,
            progress_display=progress_display,
            announce=announce,
            notice=notice,
            engine=engine,
        )
        result = tool.run(context)
        if output is not None:
            with output.staged() as folder:
                tool.write(folder, result)
    return result
