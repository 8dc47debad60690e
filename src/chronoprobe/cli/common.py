"""Options and helpers shared by every lens's commands."""

from __future__ import annotations

import datetime as dt
import functools
import inspect
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_type_hints
from urllib.parse import urlsplit

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from chronoprobe.cache import CachedModel, CallCache, check_cache_file
from chronoprobe.cache import open_cache as open_cache  # the commands import it from here
from chronoprobe.errors import ChronoprobeError, ConfigError
from chronoprobe.models.base import Sampler
from chronoprobe.models.builtin import ApiMode, BatchSize, DeviceMap, DType, Quantize
from chronoprobe.models.registry import BackendOptions, described_defaults, option_default, option_fields
from chronoprobe.progress import PROGRESS_EVERY_ENV as PROGRESS_EVERY_ENV  # the tests import it from here
from chronoprobe.progress import ProgressLines, line_if_slow, progress_every

if TYPE_CHECKING:
    from chronoprobe.lens import Lens
    from chronoprobe.publish import Inputs
    from chronoprobe.runner import RunResult

console = Console(stderr=True)

# the allowed values are the registry's own types
DTYPES: tuple[str, ...] = get_args(DType)
API_MODES: tuple[str, ...] = get_args(ApiMode)
QUANTIZE: tuple[str, ...] = get_args(Quantize)
DEVICE_MAPS: tuple[str, ...] = get_args(DeviceMap)
SAMPLERS: tuple[str, ...] = get_args(Sampler)
_DEVICE = re.compile(r"auto|cpu|mps|cuda(:\d+)?")


def _one_of(choices: tuple[str, ...]) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value not in choices:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(choices)}")
        return value

    return check


def _none_or_one_of(choices: tuple[str, ...]) -> Callable[[str | None], str | None]:
    check = _one_of(choices)
    return lambda value: None if value is None else check(value)


class BatchSizeValue:
    """``--batch-size``'s type as typer is shown it: a whole number of at least 1 or ``auto`` (the backends'
    ``BatchSize``, a union typer cannot take), parsed by :func:`parse_batch_size`."""


@dataclass(frozen=True)
class ShownAs:
    """Annotated metadata: the type typer is given for an option whose value type it cannot handle itself."""

    annotation: Any


def parse_batch_size(value: str) -> int | str:
    """``--batch-size`` as the backends' ``BatchSize``: a whole number of at least 1, or ``auto``."""
    from pydantic import TypeAdapter, ValidationError

    try:
        parsed: int | str = TypeAdapter(BatchSize).validate_python(value)
    except ValidationError:
        raise typer.BadParameter(f"{value!r} is not a batch size (use a whole number of at least 1, or auto)") from None
    return parsed


def check_device(value: str) -> str:
    """auto, cpu, mps, cuda or cuda:<index>; anything else is refused before a model loads."""
    if not _DEVICE.fullmatch(value):
        raise typer.BadParameter(f"{value!r} is not a device (use auto, cpu, cuda, cuda:<index> or mps)")
    return value


def check_cache(value: Path | None) -> Path | None:
    """The cache must be an SQLite file or a path where one can be created (it is not created here)."""
    if value is not None:
        try:
            check_cache_file(value)
        except ChronoprobeError as exc:
            raise typer.BadParameter(f"{exc.where} {exc.problem}") from None
    return value


def check_share(value: float | None) -> float | None:
    """A share or fraction in (0, 1]."""
    if value is not None and not 0 < value <= 1:
        raise typer.BadParameter(f"{value} is not a share in (0, 1]")
    return value


def check_snapshot_ref(value: str | None) -> str | None:
    """A snapshot name (a plain file name) or a path to a snapshot file, refused early if unusable."""
    if value is None:
        return None
    from chronoprobe.knowledge.snapshot import snapshot_path

    try:
        if value.endswith(".json") or "/" in value or "\\" in value:
            Path(value).expanduser().is_file()
        else:
            snapshot_path(value)  # validates the name
    except ChronoprobeError as exc:
        raise typer.BadParameter(f"{exc.where} {exc.problem}") from None
    except (OSError, ValueError) as exc:
        shown = value if len(value) <= 60 else value[:60] + "..."
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise typer.BadParameter(f"{shown!r} is not a usable file name ({reason})") from None
    return value


def check_snapshot_name(value: str | None) -> str | None:
    """A name a snapshot can be saved under: a plain, printable, not overlong file name."""
    if value is not None:
        from chronoprobe.knowledge.snapshot import snapshot_path

        try:
            snapshot_path(value)
        except ChronoprobeError as exc:
            raise typer.BadParameter(f"{exc.where} {exc.problem}") from None
    return value


def check_as_of(value: str | None) -> str | None:
    """A YYYY-MM-DD date that is not in the future (nothing is known about it yet)."""
    if value is None:
        return None
    try:
        date = dt.date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a date (use YYYY-MM-DD)") from None
    if date > dt.date.today():
        raise typer.BadParameter(f"{value} is in the future (today is {dt.date.today()})")
    return value


def check_endpoint(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise typer.BadParameter(f"{value!r} is not an http(s) URL")
    return value


ModelOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        "-m",
        help="Model spec (repeatable): smollm2, gemma3-270m, hf:<id>\\[@rev], gguf:<file>, llamacpp:<file>, vllm:<id>\\[@rev], openai:<name>@<url>, mock:constant=<text> (no model; smoke runs); "
        "NAME=SPEC gives it a short name for plots (e.g. qwen=hf:Qwen/Qwen2.5-0.5B-Instruct). See `chronoprobe models`.",
    ),
]
DTypeOpt = Annotated[
    str, typer.Option(help="Weights dtype: auto, float32, bfloat16, float16.", callback=_one_of(DTYPES))
]
DeviceOpt = Annotated[str, typer.Option(help="Device: auto, cpu, cuda, cuda:1, mps.", callback=check_device)]


def _batch_help() -> str:
    shown = "; ".join(f"{kind} {default}" for kind, default in described_defaults("batch_size"))
    return (
        "Prompts per forward pass (hf, llamacpp) or requests per wave (openai); 'auto' (hf): the largest batch "
        f"that fits. Default: each backend's own ({shown})."
    )


BatchOpt = Annotated[
    BatchSize | None,
    typer.Option(help=_batch_help(), parser=parse_batch_size, metavar="N|auto"),
    ShownAs(BatchSizeValue | None),
]
DeviceMapOpt = Annotated[
    str | None,
    typer.Option(
        "--device-map",
        help="hf: 'auto' spreads the weights over every GPU and RAM (accelerate); for models too big for one device.",
        callback=_none_or_one_of(DEVICE_MAPS),
    ),
]
QuantizeOpt = Annotated[
    str | None,
    typer.Option(
        help="hf: load the weights in 8bit or 4bit with bitsandbytes (CUDA GPU; pip install 'chronoprobe\\[quant]').",
        callback=_none_or_one_of(QUANTIZE),
    ),
]
ChatTemplateOpt = Annotated[
    bool | None,
    typer.Option(
        "--chat-template/--no-chat-template", help="Apply the model's chat template (default: if it has one)."
    ),
]
CacheOpt = Annotated[
    Path | None, typer.Option(help="SQLite call cache (default: in the user cache directory).", callback=check_cache)
]
ApiModeOpt = Annotated[
    str, typer.Option(help="openai backend: 'chat' or 'completions' endpoint.", callback=_one_of(API_MODES))
]
ConcurrencyOpt = Annotated[int, typer.Option(min=1, help="openai backend: requests in flight at once.")]
TemperatureOpt = Annotated[float, typer.Option(min=0.0, help="Sampling temperature (0 = greedy).")]
SeedOpt = Annotated[int, typer.Option(min=0, help="Sampling seed.")]
SamplerOpt = Annotated[
    str,
    typer.Option(
        help="hf: how sampled tokens are drawn: inverse-cdf (default since 0.2.0) or multinomial "
        "(reproduces the samples of releases before 0.2.0; docs/backends.md).",
        callback=_one_of(SAMPLERS),
    ),
]


def check_engine(value: str) -> str:
    """local, ray, ray:auto or ray:HOST:PORT, with Ray installed for the ray forms and a named head answering."""
    from chronoprobe.engines import parse_engine

    try:
        parse_engine(value).check()  # before any other output: an unreachable head is a bad value
    except ChronoprobeError as exc:
        raise typer.BadParameter(exc.problem) from None
    return value


EngineOpt = Annotated[
    str,
    typer.Option(
        callback=check_engine,
        help="Where the calls the cache misses run: local (this process), ray (a Ray cluster started for the run), "
        "ray:auto or ray:HOST:PORT (a running cluster; pip install 'chronoprobe\\[ray]'). Results are the same.",
    ),
]
SnapshotOpt = Annotated[
    str | None,
    typer.Option(
        help="Snapshot name or file to judge against (default: shipped 2023-12-18).", callback=check_snapshot_ref
    ),
]


_DEFAULT = {name: option_default(name) for name in option_fields()}
"""Each backend option's one default, as its backends declare it (None: each backend's own)."""


@dataclass(frozen=True)
class ModelOptions:
    """How a command loads and calls its models: the backend options, the call cache and the engine.

    The CLI's flags for the backends' options (``models/builtin.py`` declares each option with its one
    default, read here by :func:`~chronoprobe.models.registry.option_default`): each field's annotation
    is its typer option. A command
    takes them as one parameter, ``backend: ModelOptions = DEFAULT_MODEL_OPTIONS``, under
    :func:`with_model_options`, which offers the fields as options at that parameter's place.
    """

    dtype: DTypeOpt = _DEFAULT["dtype"]
    device: DeviceOpt = _DEFAULT["device"]
    batch_size: BatchOpt = _DEFAULT["batch_size"]
    device_map: DeviceMapOpt = _DEFAULT["device_map"]
    quantize: QuantizeOpt = _DEFAULT["quantize"]
    chat_template: ChatTemplateOpt = _DEFAULT["chat_template"]
    api_mode: ApiModeOpt = _DEFAULT["api_mode"]
    concurrency: ConcurrencyOpt = _DEFAULT["concurrency"]
    cache: CacheOpt = None
    engine: EngineOpt = "local"
    sampler: SamplerOpt = _DEFAULT["sampler"]

    def backend(self) -> BackendOptions:
        """The options the registry loads a model with: every field but the cache and the engine, by name
        (each backend takes those its registration declares, with its own defaults for the rest)."""
        chosen = asdict(self)
        del chosen["cache"], chosen["engine"]
        return BackendOptions(**chosen)


DEFAULT_MODEL_OPTIONS = ModelOptions()
MODEL_OPTIONS: tuple[str, ...] = tuple(field.name for field in fields(ModelOptions))


def model_option_parameters(offered: Sequence[str] = MODEL_OPTIONS) -> list[inspect.Parameter]:
    """The ``offered`` fields of :class:`ModelOptions` as command parameters (typer reads their annotations)."""
    hints = get_type_hints(ModelOptions, include_extras=True)
    return [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=_for_typer(hints[name]),
            default=getattr(DEFAULT_MODEL_OPTIONS, name),
        )
        for name in offered
    ]


def _for_typer(annotation: Any) -> Any:
    """``annotation`` with the type typer is to see (:class:`ShownAs`) in place of the value's own."""
    extras = getattr(annotation, "__metadata__", ())
    shown = [m.annotation for m in extras if isinstance(m, ShownAs)]
    if not shown:
        return annotation
    return Annotated.__class_getitem__((shown[0], *(m for m in extras if not isinstance(m, ShownAs))))  # type: ignore[attr-defined]  # Annotated[...] built from a tuple


CommandT = Callable[..., None]


def with_model_options(*omit: str) -> Callable[[CommandT], CommandT]:
    """Offer the shared model options on a command, all but ``omit``, in place of its ``ModelOptions`` parameter.

    The command is called with that parameter filled in by name; an option it does not offer keeps
    the ``ModelOptions`` default (e.g. ``sampler`` for a command that only decodes greedily).
    """
    unknown = set(omit) - set(MODEL_OPTIONS)
    if unknown:
        raise ValueError(f"not model options: {', '.join(sorted(unknown))}")
    offered = tuple(name for name in MODEL_OPTIONS if name not in omit)

    def decorate(command: CommandT) -> CommandT:
        signature = inspect.signature(command, eval_str=True)
        [slot] = [p.name for p in signature.parameters.values() if p.annotation is ModelOptions]
        parameters: list[inspect.Parameter] = []
        for parameter in signature.parameters.values():
            if parameter.name == slot:
                parameters.extend(model_option_parameters(offered))
            else:
                parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))

        @functools.wraps(command)
        def with_options(**values: Any) -> None:
            chosen = ModelOptions(**{name: values.pop(name) for name in offered if name in values})
            command(**values, **{slot: chosen})

        with_options.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]  # read by typer
        with_options.__annotations__ = {p.name: p.annotation for p in parameters}
        return with_options

    return decorate


def _click_context() -> object | None:
    try:  # recent typer vendors click
        from typer._click.globals import get_current_context
    except ImportError:  # pragma: no cover - depends on the installed typer
        from click import get_current_context  # type: ignore[no-redef]  # older typer: the same function from click itself
    return get_current_context(silent=True)


@contextmanager
def config_errors(options: dict[str, str] | None = None) -> Iterator[None]:
    """A value a config refuses (a pydantic ValidationError inside) becomes one ConfigError naming its option.

    The option of a field is ``--field-name`` unless ``options`` maps the field to another; a nested
    config's field is named by its own name (``persuasion.max_new_tokens`` -> ``--max-new-tokens``).
    """
    from pydantic import ValidationError

    try:
        yield
    except ValidationError as exc:
        error = exc.errors()[0]
        fields = [str(part) for part in error["loc"] if isinstance(part, str)]
        field = fields[-1] if fields else ""
        option = (options or {}).get(field, f"--{field.replace('_', '-')}" if field else exc.title)
        raise ConfigError(option, str(error["msg"]).removeprefix("Value error, ")) from None


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


def load_models(specs: list[str] | None, options: BackendOptions, cache: CallCache) -> list[CachedModel]:
    """Load every requested model (the embedded default if none) behind the cache, with a spinner."""
    from chronoprobe import runner

    return runner.load_models(specs, options, cache, announce=announce)


class PlainProgress(Progress):
    """Progress for a console that is not a terminal (a log file, a pipe, a CI log).

    A live bar would only be drawn once, at the end; this prints plain lines instead
    (:class:`chronoprobe.progress.ProgressLines`), e.g. ``smollm2: 120/390 (31%) 00:42 elapsed,
    2.9/s, ETA 01:33``: at least every ``every`` seconds while a task runs, and once when it ends.
    """

    def __init__(self, console: Console, every: float) -> None:
        super().__init__(console=console, disable=True)
        self._lines = ProgressLines(self._print, every)
        self._ids: dict[TaskID, int] = {}

    def _print(self, line: str) -> None:
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def add_task(
        self,
        description: str,
        start: bool = True,
        total: float | None = 100.0,
        completed: int = 0,
        visible: bool = True,
        **fields: Any,
    ) -> TaskID:
        task_id = super().add_task(
            description, start=start, total=total, completed=completed, visible=visible, **fields
        )
        self._ids[task_id] = self._lines.add(description, None if total is None else int(total))
        if completed:
            self._lines.advance(self._ids[task_id], completed)
        return task_id

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        self._lines.advance(self._ids[task_id], int(advance))

    def start(self) -> None:
        super().start()
        self._lines.__enter__()

    def stop(self) -> None:
        self._lines.close()  # every task that moved since its last line gets a final one
        super().stop()


@contextmanager
def progress_bar(transient: bool = False) -> Iterator[Progress]:
    """A live bar on a terminal; plain periodic lines (``PlainProgress``) anywhere else.

    ``transient`` erases the bar when it ends, so that an error raised inside (a failed
    live query) is the only line left on the terminal.
    """
    if not console.is_terminal:
        with PlainProgress(console, progress_every()) as plain:
            yield plain
        return
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=transient,
    ) as progress:
        yield progress


def task_progress(bar: Progress) -> Callable[[str, int], Callable[[int], None]]:
    """A progress factory for library code: each call adds a task to ``bar`` and returns its advance callback."""

    def factory(description: str, total: int) -> Callable[[int], None]:
        task = bar.add_task(description, total=total)
        return lambda k: bar.advance(task, k)

    return factory


@contextmanager
def progress_ticks() -> Iterator[Callable[[str, int], Callable[[int], None]]]:
    """A progress bar as the runner's progress factory (``chronoprobe.runner.execute(progress_display=...)``)."""
    with progress_bar() as bar:
        yield task_progress(bar)


def run_in_terminal(lens: Lens[Any], out: Path, backend: ModelOptions) -> RunResult:
    """Run ``lens`` on its models (its config's ``models``) through the runner, with the CLI's progress bars
    and model-loading status."""
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


def announce(message: str) -> AbstractContextManager[Any]:
    """A spinner with ``message`` while a slow step runs (a model load); off a terminal, a plain line.

    A log or a pipe shows no spinner; the line comes once the step has taken the progress interval
    (10 s), so a log never goes longer than that without a line, and a step that is quick (or
    fails at once, in one error line) prints nothing more.
    """
    if console.is_terminal:
        return console.status(message)
    return line_if_slow(print_plain, f"{message} ...", progress_every())


def print_plain(line: str) -> None:
    """A line as it is (no markup, no highlighting) on the CLI console: the plan line."""
    console.print(line, highlight=False, markup=False)


class _NoticeHandler(logging.Handler):
    """Prints a library notice (e.g. a Retry-After wait) as one line on the CLI console, above any progress bar."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = Text.assemble(("notice", "yellow"), f": {record.getMessage()}")
            console.print(line, highlight=False, soft_wrap=True)
        except Exception:  # a notice must never break the command
            self.handleError(record)


def show_notices() -> None:
    """Render the retry policy's wait notices (logger ``chronoprobe.retry``) on the console; idempotent."""
    notices = logging.getLogger("chronoprobe.retry")
    if not any(isinstance(h, _NoticeHandler) for h in notices.handlers):
        notices.addHandler(_NoticeHandler(logging.WARNING))
    notices.setLevel(logging.WARNING)


show_notices()  # every command module imports this one


CutoffOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--cutoff",
        help="A model's published knowledge cutoff, NAME=YYYY-MM (repeatable; NAME as in --model NAME=SPEC, "
        "or the spec): a marker on the knowledge-date plot and a row in results.",
    ),
]
DeployedAtOpt = Annotated[
    str | None,
    typer.Option(
        "--deployed-at",
        help="Forecast staleness for a model shipped on this date (YYYY-MM or YYYY-MM-DD): "
        "the share of what it knows that is stale then, 6 and 12 months later.",
    ),
]
