"""How a command loads and calls its models: the backend options, the call cache and the engine, declared once.

:class:`ModelOptions` is a pydantic model that the one generator (``cli/generate.py``: ``model_options``) offers as
it offers a config: one option per field, named as the field, its docstring the help, and a
:class:`~chronoprobe.cli.options.Typed` marker for what typer gets beside (a check run while the command line is
parsed, so a bad value is refused naming its flag before anything else). Their allowed values are the registry's
own ``Literal`` types, their defaults the ones the backends' registrations declare (``models/builtin.py``;
:func:`~chronoprobe.models.registry.option_default`). A backend of another package adds its own options beside
them, from its registration's ``options`` model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, get_args

import typer
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from chronoprobe.cache import check_cache_file
from chronoprobe.cli.options import Typed, choice
from chronoprobe.errors import ChronoprobeError
from chronoprobe.models.base import Sampler
from chronoprobe.models.builtin import ApiMode, BatchSize, DeviceMap, DType, Quantize
from chronoprobe.models.chat_dates import UNDATED_AS_OF, check_template_date
from chronoprobe.models.placement import device_name
from chronoprobe.models.registry import BackendOptions, described_defaults, option_default, option_fields

__all__ = ["DEFAULT_MODEL_OPTIONS", "MODEL_OPTIONS", "ModelOptions", "parse_batch_size"]

DTYPES: tuple[str, ...] = get_args(DType)
API_MODES: tuple[str, ...] = get_args(ApiMode)
QUANTIZE: tuple[str, ...] = get_args(Quantize)
DEVICE_MAPS: tuple[str, ...] = get_args(DeviceMap)
SAMPLERS: tuple[str, ...] = get_args(Sampler)


class BatchSizeValue:
    """``--batch-size``'s type as typer is shown it: a whole number of at least 1 or ``auto`` (the backends'
    ``BatchSize``, a union typer cannot take), parsed by :func:`parse_batch_size`."""


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


def _batch_help() -> str:
    shown = "; ".join(f"{kind} {default}" for kind, default in described_defaults("batch_size"))
    return (
        "Prompts per forward pass (hf, llamacpp) or requests per wave (openai); 'auto' (hf): the largest batch "
        f"that fits. Default: each backend's own ({shown})."
    )


def check_template_date_option(value: str) -> str:
    """``--template-date``: as-of, template or a date YYYY-MM-DD, before a model loads."""
    try:
        return check_template_date(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


_DEFAULT = {name: option_default(name) for name in option_fields()}
"""Each backend option's one default, as its backends declare it (None: each backend's own)."""

_TEMPLATE_DATE_HELP = (
    "The day a chat template that takes a date (Llama 3.x: date_string, strftime_now) is told: as-of, the audit's "
    "as-of date (outdated: --as-of, else the snapshot's retrieval date; a lens without one: "
    f"{UNDATED_AS_OF.isoformat()}); a date YYYY-MM-DD; or template, its own behaviour (the machine's clock: the "
    "prompt then changes with the day). Recorded per model in the provenance."
)


class ModelOptions(BaseModel):
    """How a command loads and calls its models: the backend options, the call cache and the engine (a backend of
    another package's own options beside them, as extras)."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True, extra="allow")

    dtype: Annotated[str, Typed(callback=choice(DTYPES))] = _DEFAULT["dtype"]
    """Weights dtype: auto, float32, bfloat16, float16."""
    device: Annotated[str, Typed(callback=check_device)] = _DEFAULT["device"]
    """Device: auto, cpu, cuda, cuda:1, mps."""
    batch_size: Annotated[
        BatchSize | None, Typed(parser=parse_batch_size, metavar="N|auto", shown=BatchSizeValue, help=_batch_help)
    ] = _DEFAULT["batch_size"]
    device_map: Annotated[str | None, Typed(callback=choice(DEVICE_MAPS))] = _DEFAULT["device_map"]
    """hf: 'auto' spreads the weights over every GPU and RAM (accelerate); for models too big for one device."""
    quantize: Annotated[str | None, Typed(callback=choice(QUANTIZE))] = _DEFAULT["quantize"]
    """hf: load the weights in 8bit or 4bit with bitsandbytes (CUDA GPU; pip install 'chronoprobe[quant]')."""
    chat_template: bool | None = _DEFAULT["chat_template"]
    """Apply the model's chat template (default: if it has one)."""
    template_date: Annotated[
        str, Typed(metavar="as-of|template|DATE", callback=check_template_date_option, help=lambda: _TEMPLATE_DATE_HELP)
    ] = _DEFAULT["template_date"]
    api_mode: Annotated[str, Typed(callback=choice(API_MODES))] = _DEFAULT["api_mode"]
    """openai backend: 'chat' or 'completions' endpoint."""
    concurrency: int = Field(_DEFAULT["concurrency"], ge=1)
    """openai backend: requests in flight at once."""
    cache: Annotated[Path | None, Typed(callback=check_cache)] = None
    """SQLite call cache (default: in the user cache directory)."""
    engine: str = "local"  # parsed and checked (a named head must answer) by the runner, first of all
    """Where the calls the cache misses run: local (this process), ray (a Ray cluster started for the run), ray:auto
    or ray:HOST:PORT (a running cluster; pip install 'chronoprobe[ray]'). Results are the same."""
    sampler: Annotated[str, Typed(callback=choice(SAMPLERS))] = _DEFAULT["sampler"]
    """hf: how sampled tokens are drawn: inverse-cdf (default since 0.2.0) or multinomial (reproduces the samples of
    releases before 0.2.0; chronoprobe docs backends)."""

    def backend(self) -> BackendOptions:
        """The options the registry loads a model with: every field but the cache and the engine, by name, and a
        backend's own options given beside them (each backend takes those its registration declares, with its own
        defaults for the rest)."""
        return BackendOptions(**self.model_dump(exclude={"cache", "engine"}))


DEFAULT_MODEL_OPTIONS = ModelOptions()
MODEL_OPTIONS: tuple[str, ...] = tuple(ModelOptions.model_fields)
