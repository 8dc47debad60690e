"""The Python API: run a lens or any other command, read a run folder back, keep a model loaded between calls.

    import chronoprobe as cp

    run = cp.run("outdated", models="smollm2", limit=20)
    run.summary.headline          # a few numbers per model
    run.to_pandas()               # one row per answer (needs pandas)
    again = cp.load(run.path)     # any run folder, new or old layout

    handle = cp.model("smollm2")  # one load, many uses
    cp.run("recency", models=handle, sample=20)
    cp.recency_gate("What is the ECB's interest rate?", handle)

    result = cp.check("smollm2", budget="quick")   # every lens at a budget's size: chronoprobe check
    result.paragraphs, result.passed, result.runs

    cp.produce("recency.label", questions="new.jsonl", out="labelled.json")  # any command, by its tool's name

Each keyword is a field of the command's config, named as its flag (``--balanced-limit`` is
``balanced_limit``; docs/api.md). Every one of them goes through the one runner
(:func:`chronoprobe.contract.runner.produce`) as the command does, and a bad value, name, type or path is one
:class:`~chronoprobe.errors.ChronoprobeError` (``ConfigError`` ...), raised before anything is written.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text

from chronoprobe.cache import CachedModel, open_cache
from chronoprobe.contract.lens import ProgressFactory, lens_class, lens_names
from chronoprobe.contract.lens_run import command_tool, lens_tool
from chronoprobe.contract.runner import load_models
from chronoprobe.contract.runner import produce as produce_with
from chronoprobe.contract.tool import RunSettings, Tool, tool_class, tool_names
from chronoprobe.engines import Engine
from chronoprobe.errors import ConfigError
from chronoprobe.models.registry import DEFAULT_MODEL, BackendOptions, ModelRequest, option_fields, parse_model
from chronoprobe.progress_lines import LOGGER, logged_progress, logged_step, quiet_third_party_output, shown_on_stderr
from chronoprobe.records.fields import spelling
from chronoprobe.records.runlog import Run, load_run
from chronoprobe.renames import warn_deprecated
from chronoprobe.version import SHIMS_REMOVED_IN

if TYPE_CHECKING:
    from chronoprobe.checkup.run import CheckResult
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


Models = str | ModelRequest | Model | Sequence[str | ModelRequest | Model]
"""What ``models`` takes: a ``--model`` value, a :func:`model` handle, or a list of them (not a mix of the two)."""


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
    if not isinstance(spec, str):
        raise ConfigError("model", f"{spec!r} is not a model spec (a text, e.g. smollm2 or hf:<id>)")
    backend_options = _backend_options(options)
    if options:
        raise ConfigError(
            "model", f"unknown option(s) {', '.join(sorted(options))}; known: {', '.join(sorted(option_fields()))}"
        )
    [loaded] = load_models([parse_model(spec)], backend_options, open_cache(_path(cache, "cache")))
    return Model(loaded.lazy_backend, loaded.cache, source=loaded.source)


def lenses() -> list[str]:
    """The names :func:`run` accepts: the built-in lenses and those installed as ``chronoprobe.lenses`` entry points."""
    return sorted(lens_names())


def tools() -> list[str]:
    """The names :func:`produce` accepts besides ``<lens>.run``: ``<lens>.<command>`` for every other command."""
    return tool_names()


def run(
    lens: str,
    models: Models | None = None,
    *,
    out: Path | str | None = None,
    cache: Path | str | None = None,
    progress: ProgressFactory | bool | None = True,
    engine: str | Engine = "local",
    **options: Any,
) -> Run:
    """Run a lens and return the run (its folder is written like the CLI's, at ``out``): ``chronoprobe <lens> run``.

    ``models``: a spec, a :func:`model` handle, or a list of them (not a mix; default: the embedded SmolLM2).
    ``out``: default ``results/<lens>/<model>-<timestamp>``. ``options``: the fields of the lens's config, named
    as the command's flags (docs/api.md lists them per lens), and backend options (dtype, device,
    batch_size ...). ``engine``: where the calls the cache misses run, ``local`` (this process), ``ray`` (a Ray
    cluster started for the run), ``ray:auto`` or ``ray:HOST:PORT`` (a running cluster); see docs/scale.md.
    ``progress``: by default the plan line and a progress line at least every 8 s go to the
    ``chronoprobe.progress`` logger, shown on stderr unless the program configured logging
    (:mod:`chronoprobe.progress_lines`); ``False`` (or None) is quiet; a factory ``progress(description, total)``
    gets the steps instead.
    """
    quiet_third_party_output()
    if not isinstance(lens, str):
        raise ConfigError("lens", f"{lens!r} is not a lens name; known: {', '.join(lenses())}")
    models = _older_models_keyword(options, models)
    made, backend, handles = _made(lens_tool(lens_class(lens)), models, {**options, "out": _path(out, "out")})
    return cast(Run, _produce(made, backend, handles, cache, progress, engine))


def produce(
    tool: str, *, cache: Path | str | None = None, progress: ProgressFactory | bool | None = True, **options: Any
) -> Any:
    """Run any command from Python, ``chronoprobe <lens> <command>`` (``<lens>.run``: a lens's run), and return its
    result.

    ``tool``: one of :func:`tools` (``conflicts.contexts``, ``recency.label``, ``editing.dataset`` ...), or
    ``<lens>.run``. ``options``: the fields of the tool's config (``chronoprobe.contract.tool.tool_class(tool)
    .config_type``; docs/api.md lists them per tool), named as the command's flags are, with ``-`` as ``_``
    (``--only-model`` is ``only_model``; ``--from`` is ``from_``, PEP 8's trailing underscore for a keyword;
    ``--model`` is ``models``), and for a tool that loads models the backend options (dtype, device,
    batch_size ...; ``engine`` where the command offers ``--engine``). Its output is checked, claimed, written and
    published as the command does it, and refused in the same words. ``progress``: as for :func:`run`; notices
    go to the ``chronoprobe.progress`` logger.
    """
    quiet_third_party_output()
    if not isinstance(tool, str):
        raise ConfigError("tool", f"{tool!r} is not a tool name; known: {', '.join(tools())}")
    cls = command_tool(tool)
    engine = options.pop("engine", "local") if _offers_engine(cls) else "local"
    made, backend, handles = _made(cls, options.pop("models", None), options)
    return _produce(made, backend, handles, cache, progress, engine)


def check(
    models: Models | None = None,
    *,
    cache: Path | str | None = None,
    progress: ProgressFactory | bool | None = True,
    **options: Any,
) -> CheckResult:
    """Ask ``models`` every registered lens at a budget's size, as ``chronoprobe check`` does: ``cp.produce("check")``.

    ``options``: the check's options, the fields of :class:`chronoprobe.checkup.tools.CheckToolConfig` named as its
    flags (``budget`` quick, standard or full; ``out``, default ``results/check/<model>-<timestamp>``; ``lens``,
    only these lenses and what they need; ``require``, thresholds such as
    ``"outdated.soft_constraint_pct.up-to-date >= 40"``, judged on the whole 95% interval unless ``strict``;
    ``live``, ``snapshot``, ``endpoint``, ``deployed_at``, ``junit``), and backend options (dtype ...; ``engine``).
    One folder: a run folder per lens, ``check.md``, ``check.json`` and ``card.html``; ``result.passed`` says
    whether every threshold holds. A check killed part way resumes when run again with the same ``out``.
    """
    quiet_third_party_output()
    engine = options.pop("engine", "local")
    made, backend, handles = _made(tool_class("check"), models, options)
    return cast("CheckResult", _produce(made, backend, handles, cache, progress, engine))


def load(path: Path | str) -> Run:
    """Read a run folder back: the shared run log (``run.json``) or an older folder's ``summary.json``
    (:func:`chronoprobe.records.runlog.load_run`). A path that is not a run folder is one DataError naming it;
    a value that is not a path, a ConfigError."""
    folder = _path(path, "path")
    if folder is None:
        raise ConfigError("path", "give the run folder to read")
    return load_run(folder)


# --- what every entry point shares -------------------------------------------------------------------------


def _made(cls: type[Tool[Any]], models: Any, options: dict[str, Any]) -> tuple[Tool[Any], BackendOptions, list[Model]]:
    """``cls`` built from ``options``, with the backend options taken out of them (where it loads models) and its
    ``models``: specs into its config, :func:`model` handles beside it (a command that takes them)."""
    requests, handles = _model_values(models)
    chosen = dict(options)
    backend = _backend_options(chosen) if cls.model_options else BackendOptions()
    made = cls.from_options(**chosen, **({"models": requests} if requests is not None else {}))
    if handles:
        if not cls.takes_handles:
            raise ConfigError("models", f"{cls.name} loads its own models: give specs, not chronoprobe.model() handles")
        made.handles = list(handles)
    return made, backend, handles


def _produce(
    tool: Tool[Any], backend: BackendOptions, handles: Sequence[Model], cache: Any, progress: Any, engine: Any
) -> Any:
    """The runner on ``tool`` with the Python API's displays: logged progress and notices unless told otherwise."""
    given = _path(cache, "cache")
    chosen_cache = given if given is not None else (handles[0].cache.path if handles else None)
    if not (progress is None or isinstance(progress, bool) or callable(progress)):
        raise ConfigError("progress", f"{progress!r} is not True, False or a progress factory")
    if not isinstance(engine, str | Engine):
        raise ConfigError("engine", f"{engine!r} is not an engine (local, ray, ray:auto or ray:HOST:PORT)")
    logged = progress is True
    with shown_on_stderr() if logged else nullcontext():
        settings = RunSettings(
            options=backend,
            cache=chosen_cache,
            progress=cast(ProgressFactory, progress) if callable(progress) else None,
            progress_display=logged_progress if logged else None,
            announce=logged_step if logged else None,
            notice=_plain_notice if logged else None,
            engine=engine,
        )
        return produce_with(tool, settings)


def compare(*folders: Path | str, allow_different_items: bool = False) -> list[CompareRow]:
    """Compare run folders (or check folders) of the same items paired, as ``chronoprobe compare`` does: each later
    folder (B) against each earlier one (A), lens by lens; one folder of a run with two models compares those.

    Returns the rows ``compare --format csv`` writes, typed (:class:`~chronoprobe.reports.compare.CompareRow`:
    ``a``, ``b``, ``delta``, ``ci_low``, ``ci_high``, ``n``, ``p``, ``test``, ``discordant_ab``, ``discordant_ba``
    beside the run, model, lens, dataset, class and metric; ``row.as_dict()`` in the table's columns).
    ``allow_different_items``: compare runs of different snapshots, catalogues or datasets on the items they share.
    """
    result = produce("compare", dirs=_folders(folders), allow_different_items=allow_different_items, progress=False)
    rows: list[CompareRow] = result.rows
    return rows


def _model_values(value: Any) -> tuple[list[str | ModelRequest] | None, list[Model]]:
    """``models`` as specs (None: the config's default) and handles; a mix, or anything else, is a ConfigError."""
    if value is None:
        return None, []
    chosen = list(value) if isinstance(value, list | tuple) else [value]
    handles = [m for m in chosen if isinstance(m, Model)]
    if handles and len(handles) != len(chosen):
        raise ConfigError("models", "give model specs or chronoprobe.model() handles, not a mix")
    if handles:
        return [_request(m) for m in handles], handles
    wrong = [m for m in chosen if not isinstance(m, str | ModelRequest)]
    if wrong:
        raise ConfigError("models", f"{wrong[0]!r} is not a model spec (a text, e.g. smollm2) or a chronoprobe.model()")
    return chosen, []


def _older_models_keyword(options: dict[str, Any], models: Any) -> Any:
    """``model=``, the keyword 0.1.0's ``run`` had before ``models``: still taken until 0.4.0, with a warning."""
    if "model" not in options:
        return models
    older = options.pop("model")
    if models is not None and older != models:
        raise ConfigError("model/models", "give models only (model is its older name)")
    warn_deprecated(f"the keyword 'model' is deprecated and removed in {SHIMS_REMOVED_IN}; use 'models'")
    return older


def _offers_engine(cls: type[Tool[Any]]) -> bool:
    return cls.model_options and "engine" not in spelling(cls.config_type).command.omit_model_options


def _backend_options(options: dict[str, Any]) -> BackendOptions:
    """Pop the backend options out of ``options`` (what is left belongs to the command): those a backend takes."""
    known = option_fields()
    return BackendOptions(**{k: options.pop(k) for k in list(options) if k in known})


def _path(value: Any, name: str) -> Path | None:
    """A path keyword as a Path (None stays None); anything but a text or a path is a ConfigError naming it."""
    if value is None or isinstance(value, Path):
        return value
    if isinstance(value, str | os.PathLike):
        return Path(value)
    raise ConfigError(name, f"{value!r} is not a path (a str or pathlib.Path)")


def _folders(values: tuple[Any, ...]) -> tuple[Path, ...]:
    """Each positional folder as a Path; a list given as one, None or a number is a ConfigError naming it."""
    for value in values:
        if isinstance(value, list | tuple):
            raise ConfigError("folders", "give each folder as its own argument, e.g. compare('A', 'B'), not a list")
        if value is None:
            raise ConfigError("folders", "None is not a folder; give the run or check folders to compare")
    return tuple(Path(_path(value, "folders") or "") for value in values)


def _plain_notice(line: str) -> None:
    """A command's notice (rich markup, for the console) as plain text on the ``chronoprobe.progress`` logger."""
    LOGGER.info(Text.from_markup(line).plain)
