"""The shape every lens has, and the table that finds lenses by name.

A lens is one question asked of a model (is it outdated? does context override it? does it
know how fresh an answer must be?). A run of it is a command like any other: the tool
:class:`~chronoprobe.contract.lens_run.LensRun` made from the lens (its config, plus ``models`` and
``out``), driven by the one runner (:func:`chronoprobe.contract.runner.produce`), which calls the
lens's stages in this order:

1. ``check_inputs()`` and ``check_engine(engine)``: refusals that read no data, in the runner's
   pre-flight, before the output folder is claimed.
2. ``load()``: read and validate the items; every data or config error surfaces here,
   before any model loads.
3. ``notices()`` and ``plan_line(cache)``, then ``setup(cache, load_model)`` (a judge, a helper model).
4. ``capabilities`` / ``check(model, engine)``: what the backend must be able to do; checked per
   model before any call.
5. ``run(model, progress)``: ask one (cached) model, return typed rows.
6. ``summarise(rows)``: the typed summary of every model's rows.
7. ``report(folder, rows, summary, provenance)``: write ``report.md``, the plots and the
   lens's historical files (``summary.json`` ...) into the staging folder.

The run writes the shared run log (``run.json``, ``items.jsonl``) itself.

What a lens must give is the core, like inspect's ``Task``: a config type (``config_type``), a row type
(``row_type``), ``load``, ``run``, the metrics from the rows (``summarise``: its :class:`Metric` records, the one summary) and
``report``. Every other stage above has a default. What other features read from a lens are optional parts
those features define, which a lens may give (one that gives none still runs, reports and appears in
``results``, the card and ``compare``):

- ``card``: :class:`~chronoprobe.reports.lens_card.CardPart`, its question and words on the card and in ``check``;
- ``checkup``: :class:`~chronoprobe.contract.check_part.CheckPart`, its sizes and needs in ``check``, with
  ``item_units()`` and ``record_classes()`` where it knows them before the run
  (:class:`~chronoprobe.contract.check_part.ItemUnits`, :class:`~chronoprobe.contract.check_part.RecordClasses`);
- ``comparable(run, model)``: its outcomes item by item, for ``compare`` and ``check --baseline``
  (:class:`~chronoprobe.reports.compare.Paired`).
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from chronoprobe import plugins
from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.contract.check_part import BUDGETS, Budget, CheckContext, CheckPart
from chronoprobe.contract.legacy_spelling import take_legacy_spelling
from chronoprobe.contract.released_hooks import adopt_released_members
from chronoprobe.engines import Engine
from chronoprobe.errors import ConfigError, PluginError
from chronoprobe.estimate import workload_line
from chronoprobe.models.base import Capability, require
from chronoprobe.models.registry import BackendOptions, ModelList, ModelRequest, default_models, parse_model
from chronoprobe.plugins import LENSES, Plugin
from chronoprobe.provenance import Provenance
from chronoprobe.records.fields import config_inputs, spelling
from chronoprobe.records.runlog import Metric, Run, Summary
from chronoprobe.reports.lens_card import CardPart
from chronoprobe.reports.metric_format import cell, unit_note

__all__ = [
    "BUDGETS",
    "LENSES",
    "Announce",
    "Budget",
    "CheckContext",
    "Lens",
    "LoadProgress",
    "Metric",
    "ModelList",
    "ModelLoader",
    "ProgressFactory",
    "RunRecipe",
    "Summary",
    "Workload",
    "lens_class",
    "lens_config_class",
    "lens_names",
    "listed_lenses",
]

ProgressFactory = Callable[[str, int], Callable[[int], None]]
"""``factory(description, total)`` returns a callback told how many steps finished."""

Announce = Callable[[str], AbstractContextManager[Any]]
"""``announce(message)``: a context shown while a slow step (a model load) runs, e.g. a spinner."""

LoadProgress = Callable[[str, int | None], Callable[[int], None]]
"""A progress factory for steps of ``load`` whose size may be unknown (``total`` None: a live query)."""


def _quiet(message: str) -> AbstractContextManager[None]:
    return nullcontext()


class ModelLoader:
    """What :meth:`Lens.setup` loads a helper model with (a judge, a counterfactual): the user's backend options.

    ``load_model(spec)`` loads ``spec`` behind the run's call cache with the options the run's own
    models get (``--dtype``, ``--device`` ...); ``options.value("device")`` is where a helper that is not a
    backend (an embedding or NLI judge) should go; ``announce`` shows a slow step.
    """

    def __init__(
        self,
        options: BackendOptions,
        load: Callable[[str | ModelRequest], CachedModel],
        announce: Announce | None = None,
    ) -> None:
        self.options = options
        self._load = load
        self.announce: Announce = announce or _quiet

    def __call__(self, spec: str | ModelRequest) -> CachedModel:
        return self._load(spec)


RowT = TypeVar("RowT", bound=BaseModel)


class Workload(BaseModel):
    """What one model is asked in a lens's run before the cache answers anything: the check's plan line."""

    items: int
    unit: str
    """What an item is: ``facts``, ``questions`` ..."""
    calls: int
    """Prompts sent to the model if nothing is cached yet."""
    at_most: bool = False
    """Upper bounds: the items are known only once an earlier lens of the check has run."""


class RunRecipe(BaseModel):
    """What a lens contributes to the provenance (the runner adds models, timing and cache)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    decoding: dict[str, Any]
    seeds: list[int]
    snapshot: dict[str, Any] | None = None
    judge: str | None = None
    extra: dict[str, Any] = {}


class Lens(ABC, Generic[RowT]):
    """One lens over a model; see the module docstring for the stages."""

    name: ClassVar[str]
    """Short name: the key in :data:`LENSES` and the folder under ``results/``."""
    kind: ClassVar[str]
    """What the folder marker and the old ``summary.json`` readers call this run, e.g. ``outdated run``."""
    row_type: ClassVar[type[BaseModel]]
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.GENERATE})

    config_type: ClassVar[type[BaseModel]]
    """The lens's pydantic config; ``chronoprobe.run(lens, **options)`` builds one from its options. Its fields
    say how its command spells them, its ``cli`` the command's help line and other names
    (:mod:`chronoprobe.records.fields`)."""

    old_rows_file: ClassVar[str] = "items.jsonl"
    """Where a folder written before the run log keeps its rows."""
    card: ClassVar[CardPart | None] = None
    """Optional: its words on the report card and in ``check`` (the question, a line about it, the paragraph's
    sentences); None: titled by its name, no sentences."""
    checkup: ClassVar[CheckPart | None] = None
    """Optional: its run in ``chronoprobe check`` (sizes per budget, the lenses it needs, its headline rate, the
    metric names it records); None: the check skips it."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # a plug-in written for 0.2.0, until 0.4.0: its card and check members become its parts, and its
        # command-line class attributes (input_options ...) its config's spelling
        adopt_released_members(cls)
        take_legacy_spelling(cls)

    def __init__(self, config: BaseModel) -> None:
        self.config = config
        self.loaded = False
        """Set by ``load`` once the items are read."""
        self.notes: list[str] = []
        """What ``load`` found that the user should know (a request it could not honour as given); see :meth:`notices`."""
        self.load_progress: LoadProgress | None = None
        """Set by the caller before ``load`` to show a slow step there (a live query); None: none shown."""

    @property
    def models(self) -> tuple[ModelRequest, ...]:
        """The models this run asks: its config's ``models`` (parsed there, once: a run's config always has them),
        the embedded default when it names none."""
        given = getattr(self.config, "models", None)
        if not given:
            return default_models()
        return tuple(parse_model(m) for m in given)

    @abstractmethod
    def load(self) -> None:
        """Read and validate the items; raise a ChronoprobeError for bad data before any model loads."""

    def check_inputs(self) -> None:
        """Refuse missing or wrong inputs, all of them in one error, before the output folder is claimed
        and before any work (cheap: it reads no data). Default: nothing to check."""

    def check_engine(self, engine: Engine) -> None:
        """Refuse an engine this run cannot use, before the output folder is claimed and before any model
        loads (weight edits need the local engine). Default: any engine."""

    def notices(self) -> list[str]:
        """Lines the user should read before the work starts, once ``load`` has run (facts without gold, a
        deprecated setting, what was chosen): the CLI prints them, ``chronoprobe.run`` logs them. Default:
        :attr:`notes`, each as a ``note:``."""
        return [f"note: {note}" for note in self.notes]

    def setup(self, cache: CallCache, load_model: ModelLoader) -> None:
        """Load what the lens itself needs besides the models (a judge, a helper model through ``load_model``,
        with the user's backend options), after ``load``, before the models."""

    def template_as_of(self) -> dt.date | None:
        """The day its models' chat templates are told under ``--template-date as-of`` (the default), after
        ``load``: the date its gold describes. None (the default): the lens has no as-of date of its own, and
        the templates are told a fixed day (:data:`chronoprobe.models.chat_dates.UNDATED_AS_OF`)."""
        return None

    def plan_line(self, cache: CallCache) -> str | None:
        """One line saying what the run will do and how long it may take, once the models are open and before
        the first call (times from :func:`chronoprobe.estimate.estimate` over ``cache``); None: no plan line.
        Default: what :meth:`workload` counts (none: no line), for each of the run's models."""
        work = self.workload()
        if work is None:
            return None
        specs = [m.spec.raw for m in self.models]
        return workload_line(self.name, work.items, work.unit, work.calls, specs, cache, at_most=work.at_most)

    def check(self, model: CachedModel, engine: Engine) -> None:
        """Fail with a CapabilityError (or ConfigError) if ``model``, run on ``engine``, cannot serve this
        lens; called for each model before any call. Default: the declared :attr:`capabilities`."""
        require(model, set(self.capabilities), purpose=f"the {self.name} lens")

    def present(self, run: Run) -> list[str]:
        """The console summary once the run is written: by default one line per model of its headline
        :class:`Metric` records, each with its interval and n (the summary's headline numbers without them)."""
        return headline_lines(run.summary)

    @abstractmethod
    def run(self, model: CachedModel, progress: ProgressFactory | None = None) -> list[RowT]:
        """Ask ``model`` every item; one typed row per answer."""

    @abstractmethod
    def summarise(self, models: Sequence[CachedModel], rows: Sequence[RowT]) -> Summary:
        """The typed summary over every model's rows: its :class:`Metric` records (every number of the run), the
        dataset they are over, the words its sentences need."""

    def recipe(self) -> RunRecipe:
        """Decoding, seeds, snapshot, judge and lens-specific provenance. Default: none recorded."""
        return RunRecipe(decoding={}, seeds=[])

    @abstractmethod
    def report(self, folder: Path, rows: Sequence[RowT], summary: Summary, provenance: Provenance) -> None:
        """Write report.md, the plots and the lens's historical files into ``folder``."""

    def workload(self) -> Workload | None:
        """What one model will be asked, for the plan line of its run and of a check (may call ``load``); None: not
        counted."""
        return None

    def input_paths(self) -> list[tuple[str, Path]]:
        """Every file or folder the run reads, with the option that names it; no output may be one of them."""
        return config_inputs(self.config)

    def output_paths(self) -> list[tuple[str, Path]]:
        """What the run writes besides its report folder (``--save-edited`` ...), with the option naming it."""
        spelled = spelling(type(self.config))
        found: list[tuple[str, Path]] = []
        for name in sorted(spelled.outputs):
            value = getattr(self.config, name, None)
            if isinstance(value, Path):
                found.append((spelled.option(name), value))
        return found

    def default_folder(self) -> str:
        """Folder under ``results/`` for this run's history (``results/<folder>/<model>-<timestamp>``)."""
        return self.name

    def run_label(self) -> str:
        """Added after the model name in a default run folder's name (e.g. ``-dynamicqa-dynamicqa``)."""
        return ""


def lens_names() -> list[str]:
    """Every registered lens: the :data:`LENSES` table, then the ``chronoprobe.lenses`` entry points."""
    return plugins.names()


def listed_lenses(taken: Collection[str] = (), invoked: str | None = None) -> dict[str, type[Lens[Any]] | Plugin]:
    """Every registered lens not named in ``taken``, in name order, as a command group is made from it: a plug-in
    by its entry point alone (nothing imported) unless it is ``invoked``, then by its class (a failure to load is
    its PluginError); a lens of the built-in table that cannot be imported is left out (``chronoprobe.run``
    still names the import error)."""
    plugged = plugins.plugins()
    wanted: dict[str, type[Lens[Any]] | Plugin] = {}
    for name in sorted(lens_names()):
        if name in taken:
            continue
        if name in plugged and name != invoked:
            wanted[name] = plugged[name]
            continue
        try:
            wanted[name] = lens_class(name)
        except (ConfigError, ImportError):
            continue
    return wanted


def lens_class(name: str) -> type[Lens[Any]]:
    """The lens class registered under ``name`` (table or entry point); ConfigError naming the known ones otherwise."""
    cls = plugins.load(name)
    if not (isinstance(cls, type) and issubclass(cls, Lens)):
        plugin = plugins.plugins().get(name)
        if plugin is not None:
            raise PluginError(plugin.label, f"names {plugin.target}, which is {cls!r}, not a chronoprobe Lens")
        raise ConfigError("lens", f"{name!r} is registered as {cls!r}, which is not a chronoprobe Lens")
    return cls


def lens_config_class(name: str) -> type[BaseModel]:
    """The pydantic config class of the lens ``name``."""
    return lens_class(name).config_type


def _metric_text(metric: Metric) -> str:
    """``name 12.3% [8.1, 17.9] (n=130)``: the number as check.md and the card show it."""
    return f"{metric.name}{unit_note(metric)} {cell(metric)}"


def headline_lines(summary: Summary) -> list[str]:
    """One line per model: its headline metric records (group ``all``), else the summary's headline numbers."""
    lines = []
    for model in summary.models or list(summary.headline):
        chosen = [m for m in summary.metrics if m.headline and m.model == model]
        if chosen:
            shown = "  ".join(_metric_text(m) if m.group == "all" else f"{m.group}: {_metric_text(m)}" for m in chosen)
        else:
            numbers = summary.headline.get(model, {})
            shown = "  ".join(f"{k} {'–' if v is None else f'{v:.4g}'}" for k, v in numbers.items())
        if shown:
            lines.append(f"{model}: {shown}")
    return lines
