"""A lens run as a command: the Tool whose output is the lens's result folder.

``chronoprobe <lens> run``, ``chronoprobe.run(lens, ...)``, ``chronoprobe.produce("<lens>.run", ...)`` and each
lens of ``chronoprobe check`` are this tool, made from the lens by :func:`lens_tool` and driven by the one
runner (:func:`chronoprobe.contract.runner.produce`). Its config is the lens's own with two more ordinary
fields, ``models`` (``--model``, where the lens's config has none) and ``out`` (``--out``, never recorded):
:func:`run_config`. What the runner checks before anything is read is the lens's (``check_inputs``,
``check_engine``, its models, ``--out`` against its inputs); its ``run`` loads the items' helpers and models,
asks them and summarises; its ``write`` is the lens's report and the run log.
"""

from __future__ import annotations

import datetime as dt
import functools
import inspect
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, ClassVar, Self

from pydantic import BaseModel, Field, create_model
from rich.markup import escape

from chronoprobe.cache import AnswerTally, CachedModel, CallCache
from chronoprobe.contract.lens import Lens, ModelLoader, lens_class
from chronoprobe.contract.power import power_lines
from chronoprobe.contract.released_hooks import released_dataset_label
from chronoprobe.contract.runner import default_folder
from chronoprobe.contract.tool import Tool, ToolContext, tool_class
from chronoprobe.engines import Engine
from chronoprobe.errors import ConfigError
from chronoprobe.models.registry import ModelRequest, config_with_models, parse_model
from chronoprobe.plugins import blame
from chronoprobe.records.fields import OUTPUT, spelling
from chronoprobe.records.publish import Output, ResultFolder, check_outside
from chronoprobe.records.runlog import Run, write_run_log

__all__ = ["LensRun", "command_tool", "default_out", "lens_tool", "run_config"]

OUT_HELP = (
    "Where to write the report folder (default: a new results/{name}/<model>-<timestamp>; an earlier report "
    "there is replaced, any other folder refused)."
)


def default_out(
    lens: Lens[Any],
    models: Sequence[str | ModelRequest] | None = None,
    root: Path = Path("results"),
    *,
    now: dt.datetime | None = None,
) -> Path:
    """``results/<lens>/<model>-<timestamp>``: one new folder per run (:func:`~chronoprobe.contract.runner.default_folder`).

    ``models``: the run's models (default: the lens's own, :attr:`Lens.models`; a text is parsed)."""
    with blame(lens, "failed in default_folder()"):
        folder = root / lens.default_folder()
    with blame(lens, "failed in run_label()"):
        label = lens.run_label()
    chosen = lens.models if models is None else [parse_model(m) for m in models]
    return default_folder(folder, label, chosen, now=now)


@functools.cache
def run_config(lens: type[Lens[Any]]) -> type[BaseModel]:
    """The config of a run of ``lens``: its own (with ``models``, :func:`config_with_models`), and ``out``."""
    own = config_with_models(lens.config_type)
    if "out" in own.model_fields:
        raise TypeError(f"{lens.__name__}: config field 'out' is taken by the run's --out (the report folder)")
    described = Field(None, exclude=True, description=OUT_HELP.format(name=lens.name))
    out: Any = (Annotated[Path | None, OUTPUT], described)
    derived: type[BaseModel] = create_model(own.__name__, __base__=own, __module__=own.__module__, out=out)
    return derived


class LensRun(Tool[Run]):
    """Run a lens on its models and publish its report folder (``run.json``, ``items.jsonl``, ``report.md``)."""

    lens_type: ClassVar[type[Lens[Any]]]
    """The lens this command runs."""
    model_options = True
    takes_handles = True

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        own = config_with_models(self.lens_type.config_type)  # the lens's config type: what the run log reads back
        values = {name: getattr(config, name) for name in own.model_fields}
        lens_config = own.model_construct(config.model_fields_set & set(own.model_fields), **values)
        with blame(self.lens_type, "failed to take its options"):
            self.lens: Lens[Any] = self.lens_type(lens_config)
        self._out: Path | None = None

    @classmethod
    def of(cls, config: BaseModel, out: Path | None = None) -> Self:
        """The run of a config of the lens built already (``AuditConfig(...)``), its report folder ``out``
        (default: a new one under ``results/``)."""
        values = {
            name: getattr(config, name) for name in type(config).model_fields if name in cls.config_type.model_fields
        }
        chosen = config.model_fields_set | ({"out"} if out is not None else set())
        return cls(cls.config_type.model_construct(chosen, **values, out=out))

    @classmethod
    def fields(cls) -> list[str]:
        """Its arguments, ``--model``, the lens's options, then ``--out``."""
        arguments = spelling(cls.config_type).arguments
        rest = [f for f in cls.config_type.model_fields if f not in {*arguments, "models", "out"}]
        return [*arguments, "models", *rest, "out"]

    @property
    def out(self) -> Path:
        """``--out``, else a new ``results/<lens>/<model>-<timestamp>`` (chosen once)."""
        if self._out is None:
            given: Path | None = getattr(self.config, "out", None)
            self._out = given if given is not None else default_out(self.lens)
        return self._out

    def check_inputs(self) -> None:
        with blame(self.lens, "failed in check_inputs()"):
            self.lens.check_inputs()
        with blame(self.lens, "failed in output_paths()"):
            check_outside(self.out, self.lens.output_paths())  # what the run writes elsewhere must not lie in --out

    def check_engine(self, engine: Engine) -> None:
        with blame(self.lens, "failed in check_engine()"):
            self.lens.check_engine(engine)

    def requested_models(self) -> tuple[ModelRequest, ...]:
        return () if self.handles else self.lens.models

    def input_paths(self) -> list[tuple[str, Path]]:
        with blame(self.lens, "failed in input_paths()"):
            return self.lens.input_paths()

    def output(self) -> Output:
        return Output("--out", self.out, ResultFolder(self.lens.kind))

    def load(self) -> None:
        """The lens's items (once: a check may have loaded them for its plan line), with a live query's progress."""
        if self.lens.loaded:
            return
        self.lens.load_progress = self.load_progress
        try:
            with blame(self.lens, "failed in load()"):
                self.lens.load()
        finally:
            self.lens.load_progress = None

    def run(self, context: ToolContext) -> Run:
        lens, engine = self.lens, context.engine
        if not engine.local:
            context.notice(escape(f"engine: {engine.label}"))
        cache = self.handles[0].cache if self.handles else context.cache
        started = time.perf_counter()
        say = (lambda line: context.notice(escape(line))) if context.settings.notice is not None else None
        if say is not None:  # for someone to read, before any model loads
            _tell_notices(lens, say)
        with blame(lens, "failed in template_as_of()"):  # the day a chat template is told (models/chat_dates.py)
            told = context.options.told(lens.template_as_of())
        context.settings = replace(context.settings, options=told)
        helpers = ModelLoader(context.options, lambda spec: context.load_helpers([spec])[0], context.settings.announce)
        with blame(lens, "failed in setup()"):
            lens.setup(cache, helpers)

        def the_models() -> list[CachedModel]:
            return list(self.handles) or context.load_models(lens.models)

        def plan() -> None:  # once every model is open and checked: a bad one stays the only line
            if say is not None:
                _tell_plan(lens, cache, say)

        models, rows = _ask(lens, engine, the_models, context, plan)
        with blame(lens, "failed in summarise()"):
            summary = lens.summarise(models, rows)
        with blame(lens, "failed in recipe()"):
            recipe = lens.recipe()
        provenance = context.provenance(recipe, models=models, cache=cache, started=started, engine=engine)
        with blame(lens, "failed in dataset_label()"):  # 0.2.0's hook, a plug-in's own until 0.4.0
            summary.dataset = summary.dataset or released_dataset_label(lens, summary, provenance) or lens.name
        return Run(self.out, lens.name, summary, kind=lens.kind, config=lens.config, provenance=provenance, rows=rows)

    def write(self, folder: Path, result: Run) -> None:
        """The lens's report, plots and historical files, then the run log every lens shares."""
        summary, provenance = result.summary, result.provenance
        with blame(self.lens, "failed in report()"):
            self.lens.report(folder, result.rows, summary, provenance)
        config = self.lens.config  # recorded without a key in a model URL
        write_run_log(
            folder,
            lens=result.lens,
            kind=result.kind,
            config=config,
            summary=summary,
            provenance=provenance,
            rows=result.rows,
        )

    def present(self, result: Run) -> list[str]:
        """The lens's console summary (:meth:`Lens.present`), then where the report is."""
        with blame(self.lens, "failed in present()"):
            lines = self.lens.present(result)
        return [*(escape(line) for line in lines), f"report: {escape(str(self.out / 'report.md'))}"]


def _tell_notices(lens: Lens[Any], notice: Callable[[str], None]) -> None:
    """The lens's notices, before any model loads."""
    with blame(lens, "failed in notices()"):
        lines = lens.notices()
    for line in lines:
        notice(line)


def _tell_plan(lens: Lens[Any], cache: CallCache, notice: Callable[[str], None]) -> None:
    """The lens's plan line and the difference its size can detect, once nothing can refuse the run any more (a
    model spec only its loader can refuse stays one error line) and before its first call: for a model the cache
    remembers, before it loads."""
    with blame(lens, "failed in plan_line()"):
        plan = lens.plan_line(cache)
    for line in [*([plan] if plan else []), *power_lines(lens, cache)]:
        notice(line)


def _ask(
    lens: Lens[Any],
    engine: Engine,
    load: Callable[[], list[CachedModel]],
    context: ToolContext,
    before_calls: Callable[[], None],
) -> tuple[list[CachedModel], list[Any]]:
    """Every model loaded, checked (before any call) and asked on ``engine``, with the progress display open while
    they run (``before_calls`` once they are checked); a ``chronoprobe.model()`` handle keeps its own engine
    after."""
    engine.start()
    try:
        models = load()
        for model in models:
            with blame(lens, "failed in check()"):
                lens.check(model, engine)
            model.tally = AnswerTally()  # the provenance counts this run's answers
        before_calls()
        earlier = [model.engine for model in models]
        rows: list[Any] = []
        try:
            for model in models:
                model.engine = engine
            with context.progress() as ticks:
                for model in models:
                    with blame(lens, "failed in run()"):
                        rows.extend(lens.run(model, ticks))
        finally:
            for model, before in zip(models, earlier, strict=True):
                model.engine = before
    finally:
        engine.stop()
    return models, rows


@functools.cache
def lens_tool(lens: type[Lens[Any]]) -> type[LensRun]:
    """The command that runs ``lens``: a :class:`LensRun` of its run's config (:func:`run_config`), whose fields and
    ``cli`` say how the command spells it."""
    first = (inspect.getdoc(lens) or f"Run the {lens.name} lens.").splitlines()[0]
    declared: dict[str, Any] = {
        "__doc__": first + " Writes a report folder (run.json, items.jsonl, report.md).",
        "__module__": lens.__module__,
        "lens_type": lens,
        "name": f"{lens.name}.run",
        "command": f"{lens.name} run",
        "config_type": run_config(lens),
    }
    made: type[LensRun] = type(f"{lens.__name__}Run", (LensRun,), declared)
    return made


def command_tool(name: str) -> type[Tool[Any]]:
    """The command ``name`` names for ``chronoprobe.produce``: a tool of :data:`~chronoprobe.contract.tool.TOOLS`,
    or ``<lens>.run``, a lens's run."""
    lens, _, command = name.partition(".") if isinstance(name, str) else ("", "", "")
    if command == "run":
        try:
            return lens_tool(lens_class(lens))
        except ConfigError:
            pass  # named with the tools' names below
    return tool_class(name)
