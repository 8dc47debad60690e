"""The shape of every command (a Tool), and the table that finds the tools by name.

A command turns inputs into files: a lens run its result folder (:class:`~chronoprobe.contract.lens_run.LensRun`,
made from the lens), and the other tools contexts for MuLan facts, a labelled RecencyQA dataset, an editing
dataset built from an audit, scores of generations made elsewhere. It is declared once: a pydantic config, one
field per option, named as its flag (:mod:`chronoprobe.records.fields`; ``models`` is ``--model``, ``out`` is
``--out``), its docstring the help, what the name cannot say (a positional argument, a switch, an output) in the
field's metadata. The one runner (:func:`chronoprobe.contract.runner.produce`) drives its
stages in this order, for the CLI, ``chronoprobe.produce``, ``chronoprobe.run`` and ``chronoprobe.check`` alike:

1. the pre-flight, each check once, before any data is read or any model loads: ``check_inputs()`` (missing or
   contradictory inputs), ``check_engine(engine)``, the backend options against each of ``requested_models()``,
   and ``output()`` (what it writes, with the rule for replacing it: :class:`~chronoprobe.records.publish.Output`)
   against every input, the call cache included;
2. the output claimed (locked) until the end;
3. ``load()``: read and validate the inputs; every data error surfaces here (a slow step shows on
   :attr:`Tool.load_progress`);
4. ``run(context)``: the work. Models load through the context (behind the one call cache), the
   progress goes to it, notices too; the provenance is built by ``context.provenance(self.recipe())``;
5. ``write(folder, result)``: the files, into a staging folder published whole (all or nothing);
6. ``answer(result)`` and ``present(result)``: the command's output on stdout (if it has one), then the
   console's lines about the result (the CLI prints them).
"""

from __future__ import annotations

import importlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Generic, Self, TypeVar, get_origin

from pydantic import BaseModel, ValidationError
from rich.console import ConsoleRenderable
from rich.text import Text

from chronoprobe.cache import CachedModel, CallCache, open_cache
from chronoprobe.contract.lens import Announce, LoadProgress, ProgressFactory, RunRecipe
from chronoprobe.engines import Engine, LocalEngine, parse_engine
from chronoprobe.errors import ConfigError
from chronoprobe.models.registry import BackendOptions, ModelRequest
from chronoprobe.provenance import Provenance, build_provenance
from chronoprobe.records.fields import config_inputs, flag_of, option_of
from chronoprobe.records.publish import Output
from chronoprobe.tables import TableView
from chronoprobe.values import config_error as refused
from chronoprobe.values import innermost_field

__all__ = [
    "GROUPS",
    "TOOLS",
    "Answer",
    "LoadModels",
    "RunSettings",
    "Tool",
    "ToolContext",
    "config_error",
    "option_of",
    "tool_class",
    "tool_names",
]

ResultT = TypeVar("ResultT")

Answer = str | TableView | Text | ConsoleRenderable
"""One piece of a command's output on stdout: a plain line, a table (drawn with its closing lines), rich text, or
another rich renderable (drawn at the terminal's width, as a ``rich.console.Console()`` prints it)."""

LoadModels = Callable[..., list[CachedModel]]
"""``load(requests, options, cache, announce, checked=...)``: models behind the cache (the runner's
:func:`~chronoprobe.contract.runner.load_models`)."""

TOOLS: dict[str, str] = {
    "outdated.score": "chronoprobe.integrations.harness_scoring:HarnessScoreTool",
    "snapshot.list": "chronoprobe.lenses.outdated.snapshot_tools:ListTool",
    "snapshot.fetch": "chronoprobe.lenses.outdated.snapshot_tools:FetchTool",
    "snapshot.diff": "chronoprobe.lenses.outdated.snapshot_tools:DiffTool",
    "snapshot.show": "chronoprobe.lenses.outdated.snapshot_tools:ShowTool",
    "catalogue.build": "chronoprobe.lenses.outdated.catalogue_tools:BuildTool",
    "catalogue.templates": "chronoprobe.lenses.outdated.catalogue_tools:TemplatesTool",
    "catalogue.report": "chronoprobe.lenses.outdated.catalogue_tools:ReportTool",
    "conflicts.contexts": "chronoprobe.lenses.conflicts.tools:ContextsTool",
    "recency.label": "chronoprobe.lenses.recency.tools:LabelTool",
    "recency.gate": "chronoprobe.lenses.recency.tools:GateTool",
    "recency.route": "chronoprobe.lenses.recency.route_tool:RouteTool",
    "recency.gate-check": "chronoprobe.lenses.recency.tools:GateCheckTool",
    "editing.dataset": "chronoprobe.lenses.editing.tools:DatasetTool",
    "editing.score": "chronoprobe.lenses.editing.tools:ScoreTool",
    "export.lm-eval": "chronoprobe.integrations.export_tools:LmEvalExportTool",
    "check": "chronoprobe.checkup.tools:CheckTool",
    "results": "chronoprobe.checkup.tools:ResultsTool",
    "compare": "chronoprobe.checkup.compare_tool:CompareTool",
    "card": "chronoprobe.checkup.tools:CardTool",
    "history": "chronoprobe.lenses.outdated.history_tool:HistoryTool",
    "lenses": "chronoprobe.checkup.listing:LensesTool",
    "docs": "chronoprobe.checkup.listing:DocsTool",
    "cache.info": "chronoprobe.checkup.cache_tools:InfoTool",
    "cache.prune": "chronoprobe.checkup.cache_tools:PruneTool",
}
"""Tool name (``<group>.<command>``, or a command of its own) -> ``module:Class``, imported on first use; a group
lists its commands in this order. ``outdated.score`` is the outdated lens's
:class:`~chronoprobe.lenses.outdated.tools.ScoreTool` with the harness logs (inspect, lm-eval) that ``integrations``
reads added to it."""


GROUPS: dict[str, str] = {
    "snapshot": "Pinned Wikidata answer snapshots for the outdated audit: list, fetch live, diff, show.",
    "catalogue": "Build fact catalogues from Wikidata property templates: build, list the templates, report a build.",
    "export": "Write chronoprobe's questions as tasks for other evaluation harnesses.",
    "cache": "The call cache: where it is and what it holds (info), and removing calls from it (prune).",
}
"""Command group -> its ``--help`` line, for the tools named ``<group>.<command>`` whose group is not a lens
(``snapshot``); a tool named without a group (``results``) is a command of its own."""


def tool_names() -> list[str]:
    return sorted(TOOLS)


def tool_class(name: str) -> type[Tool[Any]]:
    """The tool registered under ``name``; a ConfigError naming the known ones otherwise."""
    target = TOOLS.get(name)
    if target is None:
        raise ConfigError("tool", f"{name!r} is not one of {', '.join(tool_names())}")
    module, _, attribute = target.partition(":")
    found = getattr(importlib.import_module(module), attribute)
    assert isinstance(found, type) and issubclass(found, Tool), target
    return found


def config_error(
    exc: ValidationError, renamed: Mapping[str, str], where: str, config_type: type[BaseModel] | None = None
) -> ConfigError:
    """A value a config refused, as one ConfigError naming its option (``where`` when no field is named; a field
    of ``renamed`` by its entry, any other as ``config_type``'s command names it), in the words every command uses
    (:func:`chronoprobe.values.config_error`)."""

    def name_of(location: tuple[str | int, ...]) -> str:
        field = innermost_field(location)
        if field is None:
            return where
        if field in renamed:
            return renamed[field]
        return option_of(config_type, field) if config_type is not None else flag_of(field)

    return refused(exc, name_of)


@dataclass(frozen=True)
class RunSettings:
    """How a command's models load and its work shows, beside its config: what the CLI's shared model options
    and ``chronoprobe.run``'s keywords give the runner."""

    options: BackendOptions = field(default_factory=BackendOptions)
    cache: Path | None = None
    """The call cache (None: the user's default one)."""
    engine: Engine | str = field(default_factory=LocalEngine)
    """Where the calls the cache misses run: an engine, or its text (``local``, ``ray``, ``ray:auto``,
    ``ray:HOST:PORT``), parsed when a context is made of these settings and checked by the runner before anything
    else."""
    progress: ProgressFactory | None = None
    """The caller's progress factory, while the model calls run (without ``progress_display``)."""
    progress_display: Callable[[], AbstractContextManager[ProgressFactory]] | None = None
    """Opened while the model calls run (the CLI's bar), after each model's load was announced."""
    load_display: Callable[[], AbstractContextManager[LoadProgress]] | None = None
    """Opened while ``load`` runs, for a slow step there (a live query's progress)."""
    announce: Announce | None = None
    """A context shown while a slow step (a model load) runs."""
    notice: Callable[[str], None] | None = None
    """Told each line the user should see before the work goes on (rich markup; the CLI prints it)."""


class ToolContext:
    """What a tool's ``run`` may ask of the runner: the call cache, models, progress, notices, provenance.

    The call cache is opened on first use, so a tool that fails before it needs a model leaves none.
    """

    def __init__(self, load_models: LoadModels, settings: RunSettings | None = None) -> None:
        self._load_models = load_models
        settings = settings or RunSettings()
        engine = settings.engine
        self.settings = settings if isinstance(engine, Engine) else replace(settings, engine=parse_engine(engine))
        self._cache: CallCache | None = None
        self.models: list[CachedModel] = []
        """Every model loaded through :meth:`load_models`, in order: the provenance records them."""
        self.checked: tuple[ModelRequest, ...] = ()
        """The requests whose backend options the pre-flight checked (not checked again at their load)."""
        self.started: float | None = None
        """When the call cache was opened (``time.perf_counter``): the provenance's duration runs from it."""

    @property
    def options(self) -> BackendOptions:
        return self.settings.options

    @property
    def cache_path(self) -> Path | None:
        return self.settings.cache

    @property
    def engine(self) -> Engine:
        """Where the calls the cache misses run (``--engine``: ``local``, ``ray`` ...)."""
        engine = self.settings.engine
        return engine if isinstance(engine, Engine) else parse_engine(engine)  # parsed when the context was made

    @property
    def cache(self) -> CallCache:
        if self._cache is None:
            self.started = time.perf_counter()
            self._cache = open_cache(self.cache_path)
        return self._cache

    def derived(self, **changes: Any) -> ToolContext:
        """A fresh context with these settings changed (a check's lens runs: the check's, without its notices)."""
        return ToolContext(self._load_models, replace(self.settings, **changes))

    def load_models(self, specs: Sequence[str | ModelRequest] | None) -> list[CachedModel]:
        """Load ``specs`` (the embedded default when None or empty) behind the call cache; recorded in the provenance."""
        loaded = self.load_helpers(specs)
        self.models.extend(loaded)
        return loaded

    def load_helpers(self, specs: Sequence[str | ModelRequest] | None) -> list[CachedModel]:
        """:meth:`load_models` for models the provenance does not list as the run's (a lens's judge or helper)."""
        return self._load_models(
            list(specs) if specs else None, self.options, self.cache, self.settings.announce, checked=self.checked
        )

    def announce(self, message: str) -> AbstractContextManager[Any]:
        """A context shown while a slow step (loading a helper model) runs."""
        return self.settings.announce(message) if self.settings.announce is not None else nullcontext()

    def notice(self, line: str) -> None:
        """A line the user should see before the work goes on (the CLI prints it, rich markup and all)."""
        if self.settings.notice is not None:
            self.settings.notice(line)

    @contextmanager
    def progress(self) -> Iterator[ProgressFactory | None]:
        """The progress factory while the model calls run: the CLI's bar, or the caller's factory."""
        if self.settings.progress_display is not None:
            with self.settings.progress_display() as ticks:
                yield ticks
            return
        yield self.settings.progress

    def provenance(
        self,
        recipe: RunRecipe | None = None,
        *,
        models: Sequence[CachedModel] | None = None,
        cache: CallCache | None = None,
        started: float | None = None,
        engine: Engine | None = None,
    ) -> Provenance:
        """What produced the result: the models loaded, the recipe, and (with models) the duration and cache.

        A lens's run says what it asked instead: its ``models`` (a caller's handles among them), their ``cache``,
        when it ``started``, and the ``engine`` where it is not the local one."""
        recipe = recipe or RunRecipe(decoding={}, seeds=[])
        cache = cache if cache is not None else self._cache
        return build_provenance(
            self.models if models is None else models,
            decoding=recipe.decoding,
            seeds=recipe.seeds,
            snapshot=recipe.snapshot,
            judge=recipe.judge,
            extra=recipe.extra,
            started=(self.started if started is None else started) if cache is not None else None,
            call_cache=cache.path if cache is not None else None,
            # results are the local engine's; where they ran is still worth a line
            engine=None if engine is None or engine.local else engine.label,
        )


class Tool(ABC, Generic[ResultT]):
    """One command that turns inputs into files; see the module docstring for the stages."""

    name: ClassVar[str]
    """``<lens>.<command>``: the key in :data:`TOOLS` and what ``chronoprobe.produce`` takes."""
    command: ClassVar[str]
    """The CLI command (``recency label``): how a refusal of all inputs at once names the command."""
    config_type: ClassVar[type[BaseModel]]
    """The tool's pydantic config, its one declaration: one field per option, named as its flag, field docstrings
    as help; how its command spells what a name cannot say (a positional argument, a switch, a field not offered,
    the model options left off) is in its fields' metadata and its ``cli`` (:mod:`chronoprobe.records.fields`)."""
    model_options: ClassVar[bool] = False
    """The tool loads models: the command offers the shared model options (dtype, device, cache ...) and the
    call cache counts as one of its inputs. Its ``--model`` specs are its config's ``models`` field; its config's
    ``cli.omit_model_options`` are the ones it does not offer."""
    transient_progress: ClassVar[bool] = False
    """The CLI's progress bar is erased when the work ends (so that an error raised inside, a failed live query,
    is the only line left on the terminal)."""
    present_wraps: ClassVar[bool] = False
    """The CLI wraps its notices and :meth:`present` lines at the terminal's width between words (paragraphs; else
    each line is left whole, for a log or a test to find)."""
    takes_handles: ClassVar[bool] = False
    """The command asks models loaded already (``chronoprobe.model()`` handles, :attr:`handles`) when it is given
    them instead of specs: a lens run and the check."""

    def __init__(self, config: BaseModel) -> None:
        self.config = config
        self.load_progress: LoadProgress | None = None
        """Set by the runner while ``load`` runs, to show a slow step there (None: nothing shown)."""
        self.handles: list[CachedModel] = []
        """Models loaded already, asked instead of the config's ``models`` (where :attr:`takes_handles`)."""

    @classmethod
    def from_options(cls, **values: Any) -> Self:
        """The tool with its config built from ``values`` (its fields, or their older names until 0.4.0; None keeps
        a field's default, a text for a repeatable field is its one value).

        A value the config refuses is one ConfigError naming its option; so is a name it does not know.
        """
        fields = cls.config_type.model_fields
        renamed: Mapping[str, str] = getattr(cls.config_type, "renamed_fields", {})
        chosen = {name: value for name, value in values.items() if value is not None}
        for name, value in chosen.items():
            declared = fields.get(renamed.get(name, name))
            if isinstance(value, str) and declared is not None and get_origin(declared.annotation) is tuple:
                chosen[name] = (value,)
        unknown = sorted(set(chosen) - set(fields) - set(renamed))
        if unknown:
            raise ConfigError(
                f"{cls.name} option(s) {', '.join(unknown)}", f"unknown; known: {', '.join(sorted(fields))}"
            )
        try:
            config = cls.config_type(**chosen)
        except ValidationError as exc:  # named as the command names it: an argument by its metavar
            raise config_error(exc, {}, cls.command, cls.config_type) from None
        return cls(config)

    @classmethod
    def fields(cls) -> list[str]:
        """The config's fields in the order its command offers them (default: the config's order)."""
        return list(cls.config_type.model_fields)

    def option(self, field: str) -> str:
        return option_of(self.config_type, field)

    def check_inputs(self) -> None:
        """Refuse missing or contradictory inputs before the output is judged (cheap: reads no data)."""

    def check_engine(self, engine: Engine) -> None:
        """Refuse an engine this command cannot use (weight edits need the local one). Default: any engine."""

    def requested_models(self) -> tuple[ModelRequest, ...]:
        """The models the command will load: its config's ``models`` (their backend options are checked by the
        pre-flight, before anything is read)."""
        return tuple(getattr(self.config, "models", ()))

    def input_paths(self) -> list[tuple[str, Path]]:
        """Every file or folder the tool reads, with the option that names it; no output may be one of them."""
        return config_inputs(self.config, frozenset({"out"}))  # --out: always what it writes

    def output(self) -> Output | None:
        """What the tool writes, with the rule for replacing it; None: it writes nothing here."""
        return None

    def load(self) -> None:
        """Read and validate the inputs; raise a ChronoprobeError for bad data before any model loads."""

    @abstractmethod
    def run(self, context: ToolContext) -> ResultT:
        """Do the work; models, progress and notices through ``context``."""

    def recipe(self) -> RunRecipe | None:
        """Decoding, seeds, snapshot, judge and the tool's own provenance (after ``run``); None: none recorded."""
        return None

    def write(self, folder: Path, result: ResultT) -> None:
        """Write the output's files (``output().path``'s name and its companions) into ``folder``."""

    def present(self, result: ResultT) -> list[str]:
        """The console's lines about ``result`` (rich markup), printed once the output is published."""
        return []

    def answer(self, result: ResultT) -> Sequence[Answer]:
        """The command's own output, on stdout before :meth:`present`'s lines (a measurement a script reads, a
        table): plain lines, tables or rich text. Default: none."""
        return []

    def exit_status(self, result: ResultT) -> int:
        """The command's exit status once its output is shown (``chronoprobe check``: 1 when a threshold fails)."""
        return 0
