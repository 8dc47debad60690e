"""How a command loads and calls its models: the backend options, the call cache and the engine, declared once.

A command takes them as one parameter, ``backend: ModelOptions = DEFAULT_MODEL_OPTIONS``, under
:func:`with_model_options`, which offers each field as a typer option at that parameter's place.
Their allowed values are the registry's own ``Literal`` types, their defaults the ones the backends'
registrations declare (``models/builtin.py``; :func:`~chronoprobe.models.registry.option_default`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Annotated, Any, get_args, get_type_hints

import typer
from pydantic import TypeAdapter, ValidationError

from chronoprobe.cache import check_cache_file
from chronoprobe.cli.options import choice
from chronoprobe.errors import ChronoprobeError
from chronoprobe.models.base import Sampler
from chronoprobe.models.builtin import ApiMode, BatchSize, DeviceMap, DType, Quantize
from chronoprobe.models.chat_dates import UNDATED_AS_OF, check_template_date
from chronoprobe.models.placement import device_name
from chronoprobe.models.registry import BackendOptions, described_defaults, option_default, option_fields

DTYPES: tuple[str, ...] = get_args(DType)
API_MODES: tuple[str, ...] = get_args(ApiMode)
QUANTIZE: tuple[str, ...] = get_args(Quantize)
DEVICE_MAPS: tuple[str, ...] = get_args(DeviceMap)
SAMPLERS: tuple[str, ...] = get_args(Sampler)


class BatchSizeValue:
    """``--batch-size``'s type as typer is shown it: a whole number of at least 1 or ``auto`` (the backends'
    ``BatchSize``, a union typer cannot take), parsed by :func:`parse_batch_size`."""


@dataclass(frozen=True)
class ShownAs:
    """Annotated metadata: the type typer is given for an option whose value type it cannot handle itself."""

    annotation: Any


def parse_batch_size(value: str) -> int | str:
    """``--batch-size`` as the backends' ``BatchSize``: a whole number of at least 1, or ``auto``."""
    try:
        parsed: int | str = TypeAdapter(BatchSize).validate_python(value)
    except ValidationError:
        raise typer.BadParameter(f"{value!r} is not a batch size (use a whole number of at least 1, or auto)") from None
    return parsed


def check_device(value: str) -> str:
    """auto, cpu, mps, cuda or cuda:<index> (:func:`~chronoprobe.models.placement.device_name`), before a model loads."""
    try:
        return device_name(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def check_cache(value: Path | None) -> Path | None:
    """The cache must be an SQLite file or a path where one can be created (it is not created here)."""
    if value is not None:
        try:
            check_cache_file(value)
        except ChronoprobeError as exc:
            raise typer.BadParameter(f"{exc.where} {exc.problem}") from None
    return value


DTypeOpt = Annotated[
    str, typer.Option(help="Weights dtype: auto, float32, bfloat16, float16.", callback=choice(DTYPES))
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
        callback=choice(DEVICE_MAPS),
    ),
]
QuantizeOpt = Annotated[
    str | None,
    typer.Option(
        help="hf: load the weights in 8bit or 4bit with bitsandbytes (CUDA GPU; pip install 'chronoprobe\\[quant]').",
        callback=choice(QUANTIZE),
    ),
]
ChatTemplateOpt = Annotated[
    bool | None,
    typer.Option(
        "--chat-template/--no-chat-template", help="Apply the model's chat template (default: if it has one)."
    ),
]


def check_template_date_option(value: str) -> str:
    """``--template-date``: as-of, template or a date YYYY-MM-DD, before a model loads."""
    try:
        return check_template_date(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


TemplateDateOpt = Annotated[
    str,
    typer.Option(
        metavar="as-of|template|DATE",
        callback=check_template_date_option,
        help="The day a chat template that takes a date (Llama 3.x: date_string, strftime_now) is told: as-of, the "
        "audit's as-of date (outdated: --as-of, else the snapshot's retrieval date; a lens without one: "
        f"{UNDATED_AS_OF.isoformat()}); a date YYYY-MM-DD; or template, its own behaviour (the machine's clock: "
        "the prompt then changes with the day). Recorded per model in the provenance.",
    ),
]
CacheOpt = Annotated[
    Path | None, typer.Option(help="SQLite call cache (default: in the user cache directory).", callback=check_cache)
]
ApiModeOpt = Annotated[
    str, typer.Option(help="openai backend: 'chat' or 'completions' endpoint.", callback=choice(API_MODES))
]
ConcurrencyOpt = Annotated[int, typer.Option(min=1, help="openai backend: requests in flight at once.")]
SamplerOpt = Annotated[
    str,
    typer.Option(
        help="hf: how sampled tokens are drawn: inverse-cdf (default since 0.2.0) or multinomial "
        "(reproduces the samples of releases before 0.2.0; chronoprobe docs backends).",
        callback=choice(SAMPLERS),
    ),
]
EngineOpt = Annotated[
    str,
    typer.Option(  # parsed and checked (a named head must answer) by the runner, first of all
        help="Where the calls the cache misses run: local (this process), ray (a Ray cluster started for the run), "
        "ray:auto or ray:HOST:PORT (a running cluster; pip install 'chronoprobe\\[ray]'). Results are the same.",
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
    template_date: TemplateDateOpt = _DEFAULT["template_date"]
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
