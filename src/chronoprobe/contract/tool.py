"""The shape of a command that is not a lens run (a Tool), and the table that finds tools by name.

A tool turns inputs into files: contexts for MuLan facts, a labelled RecencyQA dataset, an editing
dataset built from an audit, scores of generations made elsewhere. It is declared the way a lens
is: a pydantic config (its one declaration; field docstrings are the help text), the option names
where they differ from the fields (``input_options``), its positional arguments, its output fields
and the text fields that may hold a path. The runner (:func:`chronoprobe.contract.runner.produce`) drives
its stages in this order, for ``chronoprobe <lens> <command>`` and ``chronoprobe.produce`` alike:

1. ``check_inputs()``: refuse missing or contradictory inputs, cheaply, before anything else.
2. ``output()``: what the tool writes and the rule for replacing it
   (:class:`~chronoprobe.contract.publish.Output`); checked against every input, then claimed (locked)
   until the end, before any model loads.
3. ``load()``: read and validate the inputs; every data error surfaces here.
4. ``run(context)``: the work. Models load through the context (behind the one call cache), the
   progress goes to it, notices too; the provenance is built by ``context.provenance(self.recipe())``.
5. ``write(folder, result)``: the files, into a staging folder published whole (all or nothing).
6. ``answer(result)`` and ``present(result)``: the command's output on stdout (if it has one), then the
   console's lines about the result (the CLI prints them).
"""

from __future__ import annotations

import importlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar, get_origin

from pydantic import BaseModel, ValidationError
from rich.console import ConsoleRenderable
from rich.text import Text

from chronoprobe.cache import CachedModel, CallCache, open_cache
from chronoprobe.contract.lens import Announce, ProgressFactory, RunRecipe
from chronoprobe.contract.publish import Output
from chronoprobe.errors import ConfigError
from chronoprobe.models.registry import BackendOptions
from chronoprobe.provenance import Provenance, build_provenance
from chronoprobe.tables import TableView

__all__ = [
    "GROUPS",
    "TOOLS",
    "Answer",
    "ModelLoader",
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

ModelLoader = Callable[[Sequence[str] | None, BackendOptions, CallCache, Announce | None], list[CachedModel]]
"""``load(specs, options, cache, announce)``: models behind the cache (``chronoprobe.contract.runner.load_models``)."""

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
    "recency.gate-check": "chronoprobe.lenses.recency.tools:GateCheckTool",
    "editing.dataset": "chronoprobe.lenses.editing.tools:DatasetTool",
    "editing.score": "chronoprobe.lenses.editing.tools:ScoreTool",
    "export.lm-eval": "chronoprobe.integrations.export_tools:LmEvalExportTool",
    "check": "chronoprobe.checkup.tools:CheckTool",
    "results": "chronoprobe.checkup.tools:ResultsTool",
    "compare": "chronoprobe.checkup.compare_tool:CompareTool",
    "card": "chronoprobe.checkup.tools:CardTool",
    "history": "chronoprobe.lenses.outdated.history_tool:HistoryTool",
}
"""Tool name (``<group>.<command>``, or a command of its own) -> ``module:Class``, imported on first use; a group
lists its commands in this order. ``outdated.score`` is the outdated lens's
:class:`~chronoprobe.lenses.outdated.tools.ScoreTool` with the harness logs (inspect, lm-eval) that ``integrations``
reads added to it."""


GROUPS: dict[str, str] = {
    "snapshot": "Pinned Wikidata answer snapshots for the outdated audit: list, fetch live, diff, show.",
    "catalogue": "Build fact catalogues from Wikidata property templates: build, list the templates, report a build.",
    "export": "Write chronoprobe's questions as tasks for other evaluation harnesses.",
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


def option_of(field: str, renamed: Mapping[str, str]) -> str:
    """The option naming a config field: ``renamed[field]``, else ``--field-name``."""
    return renamed.get(field, "--" + field.replace("_", "-"))


def config_error(exc: ValidationError, renamed: Mapping[str, str], where: str) -> ConfigError:
    """A value a config refused, as one ConfigError naming its option (``where`` when no field is named), in
    the words every command uses (:func:`chronoprobe.values.config_error`)."""
    from chronoprobe.values import config_error as refused
    from chronoprobe.values import innermost_field

    def name_of(location: tuple[str | int, ...]) -> str:
        field = innermost_field(location)
        return where if field is None else option_of(field, renamed)

    return refused(exc, name_of)


class ToolContext:
    """What a tool's ``run`` may ask of the runner: the call cache, models, progress, notices, provenance.

    The call cache is opened on first use, so a tool that fails before it needs a model leaves none.
    """

    def __init__(
        self,
        *,
        load_models: ModelLoader,
        options: BackendOptions | None = None,
        cache: Path | None = None,
        progress: ProgressFactory | None = None,
        progress_display: Callable[[], AbstractContextManager[ProgressFactory]] | None = None,
        announce: Announce | None = None,
        notice: Callable[[str], None] | None = None,
        engine: str = "local",
    ) -> None:
        self._load_models = load_models
        self.options = options or BackendOptions()
        self.cache_path = cache
        self.engine = engine
        """Where the calls the cache misses run (``--engine``: ``local``, ``ray`` ...), for a tool that offers it."""
        self._cache: CallCache | None = None
        self._progress = progress
        self._progress_display = progress_display
        self._announce = announce
        self._notice = notice
        self.models: list[CachedModel] = []
        """Every model loaded through :meth:`load_models`, in order: the provenance records them."""
        self.started: float | None = None
        """When the call cache was opened (``time.perf_counter``): the provenance's duration runs from it."""

    @property
    def cache(self) -> CallCache:
        if self._cache is None:
            self.started = time.perf_counter()
            self._cache = open_cache(self.cache_path)
        return self._cache

    def load_models(self, specs: Sequence[str] | None) -> list[CachedModel]:
        """Load ``specs`` (the embedded default when None or empty) behind the call cache."""
        loaded = self._load_models(list(specs) if specs else None, self.options, self.cache, self._announce)
        self.models.extend(loaded)
        return loaded

    def announce(self, message: str) -> AbstractContextManager[Any]:
        """A context shown while a slow step (loading a helper model) runs."""
        return self._announce(message) if self._announce is not None else nullcontext()

    def notice(self, line: str) -> None:
        """A line the user should see before the work goes on (the CLI prints it, rich markup and all)."""
        if self._notice is not None:
            self._notice(line)

    @contextmanager
    def progress(self) -> Iterator[ProgressFactory | None]:
        """The progress factory while the model calls run: the CLI's bar, or the caller's factory."""
        if self._progress_display is not None:
            with self._progress_display() as ticks:
                yield ticks
            return
        yield self._progress

    def provenance(self, recipe: RunRecipe | None = None) -> Provenance:
        """What produced the result: the models loaded, the recipe, and (with models) the duration and cache."""
        recipe = recipe or RunRecipe(decoding={}, seeds=[])
        with_models = self._cache is not None
        return build_provenance(
            self.models,
            decoding=recipe.decoding,
            seeds=recipe.seeds,
            snapshot=recipe.snapshot,
            judge=recipe.judge,
            extra=recipe.extra,
            started=self.started if with_models else None,
            call_cache=self._cache.path if self._cache is not None else None,
        )


class Tool(ABC, Generic[ResultT]):
    """One command that turns inputs into files; see the module docstring for the stages."""

    name: ClassVar[str]
    """``<lens>.<command>``: the key in :data:`TOOLS` and what ``chronoprobe.produce`` takes."""
    command: ClassVar[str]
    """The CLI command (``recency label``): how a refusal of all inputs at once names the command."""
    config_type: ClassVar[type[BaseModel]]
    """The tool's pydantic config, its one declaration: one field per option, field docstrings as help."""
    input_options: ClassVar[dict[str, str]] = {}
    """Config field -> the option that names it, where the two differ (``from_run`` -> ``--from``)."""
    arguments: ClassVar[tuple[str, ...]] = ()
    """Config fields taken as positional arguments, in order (``recency label QUESTIONS``)."""
    output_fields: ClassVar[frozenset[str]] = frozenset({"out"})
    """Path fields the tool writes rather than reads."""
    text_paths: ClassVar[frozenset[str]] = frozenset()
    """Text config fields that may hold a path (a file, or a name or hub id: only existing paths count)."""
    model_options: ClassVar[bool] = False
    """The tool loads models: the command offers the shared model options (dtype, device, cache ...) and the
    call cache counts as one of its inputs."""
    omit_model_options: ClassVar[tuple[str, ...]] = ()
    """The shared model options it does not offer (``engine``, ``sampler`` ...), as ``with_model_options(*omit)``."""
    takes_model: ClassVar[bool] = False
    """The command takes ``--model``/``-m`` specs (``ModelOpt``), in the config field ``model``."""
    renamed_options: ClassVar[dict[str, str]] = {}
    """Options renamed for one meaning per flag, old spelling -> new: the old one still works for a release."""
    transient_progress: ClassVar[bool] = False
    """The CLI's progress bar is erased when the work ends (so that an error raised inside, a failed live query,
    is the only line left on the terminal)."""

    def __init__(self, config: BaseModel) -> None:
        self.config = config

    @classmethod
    def from_options(cls, **values: Any) -> Tool[ResultT]:
        """The tool with its config built from ``values`` (config fields; None keeps a field's default, and
        a text for a repeatable field is its one value).

        A value the config refuses is one ConfigError naming its option.
        """
        fields = cls.config_type.model_fields
        chosen = {field: value for field, value in values.items() if value is not None}
        for field, value in chosen.items():
            if isinstance(value, str) and field in fields and get_origin(fields[field].annotation) is tuple:
                chosen[field] = (value,)
        unknown = sorted(set(chosen) - set(fields))
        if unknown:
            raise ConfigError(
                f"{cls.name} option(s) {', '.join(unknown)}", f"unknown; known: {', '.join(sorted(fields))}"
            )
        try:
            config = cls.config_type(**chosen)
        except ValidationError as exc:
            raise config_error(exc, cls.input_options, cls.command) from None
        return cls(config)

    def option(self, field: str) -> str:
        return option_of(field, self.input_options)

    def check_inputs(self) -> None:
        """Refuse missing or contradictory inputs before the output is judged (cheap: reads no data)."""

    def input_paths(self) -> list[tuple[str, Path]]:
        """Every file or folder the tool reads, with the option that names it; no output may be one of them."""
        found: list[tuple[str, Path]] = []
        for field, value in self.config:
            if field in self.output_fields:
                continue
            values = value if isinstance(value, (tuple, list)) else (value,)
            for item in values:
                if isinstance(item, Path):
                    found.append((self.option(field), item))
                elif field in self.text_paths and isinstance(item, str) and Path(item).exists():
                    found.append((self.option(field), Path(item)))
        return found

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
