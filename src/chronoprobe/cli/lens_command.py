"""``chronoprobe <lens> run`` for a registered lens that has no command written by hand (a plug-in).

The command's options come from the lens's pydantic config: one option per field, named as the
lens's ``input_options`` say (``--field-name`` otherwise), with the field's default and its
description as help. A ``Literal`` field takes one of its values, a ``bool`` is a ``--x/--no-x``
flag, a tuple or list is repeatable. Beside them: ``--model``, ``--out`` and the shared model
options (:class:`~chronoprobe.cli.common.ModelOptions`). A field of another type, or one named
like a shared option, is not offered and keeps its default.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import typer
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from chronoprobe.cli.common import (
    DEFAULT_MODEL_OPTIONS,
    MODEL_OPTIONS,
    ModelOpt,
    ModelOptions,
    claim_run_dir,
    console,
    run_in_terminal,
    with_model_options,
)
from chronoprobe.errors import ConfigError
from chronoprobe.lens import Lens, Summary, lens_config
from chronoprobe.plugins import Plugin, blame, unloadable

_PLAIN = (str, int, float, Path)
_TAKEN = frozenset({"model", "models", "out", *MODEL_OPTIONS})
"""Names the command itself uses: a config field of one of these names gets no option."""


def lens_names() -> list[str]:
    """Every registered lens name (the LENSES table and ``chronoprobe.lenses`` entry points): the one place
    this module asks the lens registry."""
    from chronoprobe import plugins

    return sorted(plugins.names())


@dataclass(frozen=True)
class ConfigOption:
    """One config field offered as a command option."""

    field: str
    option: str
    parameter: inspect.Parameter


def _one_of(choices: tuple[str, ...]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value is not None and value not in choices:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(choices)}")
        return value

    return check


def _optional(annotation: Any) -> tuple[Any, bool]:
    """``X | None`` -> (X, True); anything else -> (annotation, False)."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) == 1 and len(get_args(annotation)) == 2:
            return members[0], True
    return annotation, False


def _option_type(annotation: Any) -> tuple[Any, tuple[str, ...] | None, bool] | None:
    """(the option's value type, its choices, whether it repeats), or None for a field the CLI cannot offer."""
    inner, _ = _optional(annotation)
    origin = get_origin(inner)
    if origin is Literal:
        choices = get_args(inner)
        return (str, tuple(choices), False) if all(isinstance(c, str) for c in choices) else None
    if origin in (tuple, list):
        args = [a for a in get_args(inner) if a is not Ellipsis]
        if len(args) != 1 or (origin is tuple and len(get_args(inner)) != 2):
            return None  # a fixed-length tuple is not a repeatable option
        element = _option_type(args[0])
        if element is None or element[2] or element[0] is bool:
            return None
        return element[0], element[1], True
    if inner is bool or inner in _PLAIN:
        return inner, None, False
    return None


def _config_option(lens: type[Lens[Any]], field: str, info: FieldInfo) -> ConfigOption | None:
    shape = _option_type(info.annotation)
    if field in _TAKEN or field in lens.output_fields or shape is None:
        return None
    value_type, choices, repeats = shape
    option = lens.input_options.get(field, "--" + field.replace("_", "-"))
    help_text = (info.description or "").strip()
    if choices:
        help_text = f"{help_text} One of: {', '.join(choices)}.".strip()
    callback = _one_of(choices) if choices and not repeats else None
    required = info.is_required()
    if repeats:
        annotation: Any = types.GenericAlias(list, (value_type,)) | None  # None: the config's own default
        default: Any = None if not required else inspect.Parameter.empty
        declared = typer.Option(option, help=help_text + " (repeatable)")
    elif value_type is bool:
        annotation = bool
        default = info.default if not required else inspect.Parameter.empty
        declared = typer.Option(f"{option}/--no-{option.removeprefix('--')}", help=help_text)
    else:
        default_value = None if required or info.default_factory is not None else info.default
        annotation = value_type if default_value is not None else value_type | None
        default = inspect.Parameter.empty if required else default_value
        declared = typer.Option(option, help=help_text, callback=callback)
    parameter = inspect.Parameter(
        field, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[annotation, declared], default=default
    )
    return ConfigOption(field, option, parameter)


def config_options(lens: type[Lens[Any]]) -> list[ConfigOption]:
    """The options a lens's config offers on its generated command, in field order."""
    found = (_config_option(lens, field, info) for field, info in lens.config_type.model_fields.items())
    return [option for option in found if option is not None]


def build_config(
    lens: type[Lens[Any]], offered: list[ConfigOption], values: dict[str, Any], models: list[str]
) -> BaseModel:
    """The lens's config from the command's values; a value it refuses is one error line naming the option."""
    chosen = {o.field: values[o.field] for o in offered if values.get(o.field) is not None}
    try:
        return lens_config(lens, models, chosen)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else ""
        names = {o.field: o.option for o in offered}
        message = str(error["msg"]).removeprefix("Value error, ")
        raise ConfigError(names.get(field, f"{lens.name} config {field}".strip()), message) from None


def headline_lines(summary: Summary) -> list[str]:
    """One line per model: its headline numbers."""
    lines = []
    for spec, numbers in summary.headline.items():
        shown = "  ".join(f"{name} {'–' if value is None else f'{value:.4g}'}" for name, value in numbers.items())
        lines.append(f"{spec}: {shown}")
    return lines


def lens_command(lens: type[Lens[Any]]) -> Callable[..., None]:
    """The ``run`` command of ``lens``: its config's options, ``--model``, ``--out`` and the model options."""
    offered = config_options(lens)

    def run(**values: Any) -> None:
        from chronoprobe.runner import default_out

        model: list[str] | None = values.pop("model")
        out: Path | None = values.pop("out")
        backend: ModelOptions = values.pop("backend")
        with blame(lens, "failed to take its options"):
            instance = lens(build_config(lens, offered, values, model or []))
        out = out or default_out(instance)
        with blame(lens, "failed in input_paths()"):
            claim_run_dir(instance, out, backend.cache)  # checked and locked before any model loads
        with blame(lens, "failed in load()"):
            instance.load()  # bad data fails before any model loads
        result = run_in_terminal(instance, out, backend)
        for line in headline_lines(result.summary):
            console.print(line, highlight=False, markup=False)
        console.print(f"report: {out / 'report.md'}", highlight=False)

    out_help = f"Report folder (default: a new results/{lens.name}/<model>-<timestamp>)."
    parameters = [
        inspect.Parameter("model", inspect.Parameter.KEYWORD_ONLY, annotation=ModelOpt, default=None),
        *(o.parameter for o in offered),
        inspect.Parameter(
            "out",
            inspect.Parameter.KEYWORD_ONLY,
            annotation=Annotated[Path | None, typer.Option(help=out_help)],
            default=None,
        ),
        inspect.Parameter(
            "backend", inspect.Parameter.KEYWORD_ONLY, annotation=ModelOptions, default=DEFAULT_MODEL_OPTIONS
        ),
    ]
    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]  # read by typer
    run.__doc__ = f"Run the {lens.name} lens and write a report folder (run.json, items.jsonl, report.md)."
    return with_model_options()(run)


def lens_app(lens: type[Lens[Any]]) -> typer.Typer:
    """``chronoprobe <lens>``: a group holding the lens's generated ``run`` command."""
    summary = (inspect.getdoc(lens) or f"The {lens.name} lens.").splitlines()[0]
    group = typer.Typer(help=summary, no_args_is_help=True)
    group.command("run")(lens_command(lens))
    return group


def plugin_stub_app(plugin: Plugin, *, check: bool) -> typer.Typer:
    """``chronoprobe <plug-in>`` as ``chronoprobe --help`` lists it: from its entry point, nothing imported.

    With ``check``, what can be seen without running its code (a missing module, a syntax error, a
    missing attribute) marks it "(plug-in, not loaded)". Its real group is made only when it is the
    command run (``cli/main.py``).
    """
    reason = unloadable(plugin) if check else None
    if reason is not None:
        summary = f"(plug-in, not loaded) {plugin.origin}: {reason}"
    else:
        summary = f"{plugin.summary or 'A lens'} (plug-in from {plugin.origin})"
    return typer.Typer(help=summary, no_args_is_help=True)
