"""``chronoprobe <lens> run``, generated from the lens's declaration: every lens's run command, built-in or plug-in.

A declaration is a class with ``name``, ``config_type`` (a pydantic config), ``input_options``,
``arguments``, ``output_fields`` (and, where it has them, ``internal_fields``): a
:class:`~chronoprobe.contract.lens.Lens`, or a :class:`~chronoprobe.contract.tool.Tool` (:mod:`chronoprobe.cli.tool_command`
reads it the tool's way, :class:`Rules`). Its command has one option per config field, named as its
``input_options`` say (``--field-name`` otherwise), the fields in ``arguments`` as positional
arguments, the field's default, and the field's docstring as help. A ``Literal`` field takes one of
its values, a ``bool`` is a ``--x/--no-x`` flag (or a switch, when ``input_options`` spells it
``--x``), a tuple or list is repeatable (numbers as text, so ``0.25,0.5`` is one value), a mapping
declared as :data:`chronoprobe.values.KeyValues` a repeatable ``NAME=VALUE``. The config parses
and checks every value, so ``chronoprobe.run`` takes the same strings. Beside them: ``--model``,
``--out`` and the model options the lens uses (:class:`~chronoprobe.cli.model_options.ModelOptions`).
A field of another type, one named like a shared option, or one the declaration keeps internal, is
not offered and keeps its default.
"""

from __future__ import annotations

import datetime as dt
import inspect
import keyword
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Protocol, Union, get_args, get_origin

import typer
from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from rich.markup import escape

from chronoprobe.cli.deprecated import with_deprecated
from chronoprobe.cli.model_options import DEFAULT_MODEL_OPTIONS, MODEL_OPTIONS, ModelOptions, with_model_options
from chronoprobe.cli.options import ModelOpt
from chronoprobe.contract.lens import Lens, with_models
from chronoprobe.contract.tool import option_of
from chronoprobe.errors import ConfigError
from chronoprobe.models.registry import ModelRequest
from chronoprobe.plugins import Plugin, blame, unloadable
from chronoprobe.values import config_error, innermost_field, key_values

_PLAIN = (str, int, float, Path)
_TAKEN = frozenset({"model", "models", "out", *MODEL_OPTIONS})
"""Names the command itself uses: a config field of one of these names gets no option."""


class Declaration(Protocol):
    """What a generated command is made from: a Lens class, or a Tool (``chronoprobe.contract.tool``), declared alike.
    (``internal_fields``, config fields not offered, is read where a declaration has it.)"""

    name: ClassVar[str]
    config_type: ClassVar[type[BaseModel]]
    input_options: ClassVar[dict[str, str]]
    arguments: ClassVar[tuple[str, ...]]
    output_fields: ClassVar[frozenset[str]]


@dataclass(frozen=True)
class ConfigOption:
    """One config field offered as a command option (or argument)."""

    field: str
    option: str
    """``--facts``, or an argument's name in capitals (``DATASET``), as errors name it."""
    parameter: inspect.Parameter
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Shape:
    value_type: Any
    choices: tuple[str, ...] | None = None
    repeats: bool = False


def _optional(annotation: Any) -> Any:
    """``X | None`` -> X; anything else as it is."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return members[0]
    return annotation


def _bare(annotation: Any) -> tuple[Any, list[Any]]:
    """The type without ``Optional`` and ``Annotated``, and the ``Annotated`` metadata."""
    inner = _optional(annotation)
    if get_origin(inner) is Annotated:
        base, *metadata = get_args(inner)
        return _optional(base), metadata
    return inner, []


def _shape(annotation: Any, metadata: list[Any] | None = None) -> _Shape | None:
    """How a field of this type (with its pydantic ``metadata``) is offered, or None for one the command cannot offer."""
    inner, _ = _bare(annotation)
    origin = get_origin(inner)
    if inner is ModelRequest:
        return _Shape(str)  # a --model value, as text: the config parses it
    if origin in (Union, types.UnionType):  # e.g. a choice or a model spec: text, when every member is text
        members = [_shape(member) for member in get_args(inner)]
        return _Shape(str) if all(m is not None and m.value_type is str and not m.repeats for m in members) else None
    if origin is Literal:
        choices = get_args(inner)
        return _Shape(str, tuple(choices)) if all(isinstance(c, str) for c in choices) else None
    if origin is dict:  # only a mapping declared to take NAME=VALUE texts
        texts = any(getattr(m, "func", None) is key_values for m in [*(metadata or []), *_bare(annotation)[1]])
        return _Shape(str, repeats=True) if texts else None
    if origin in (tuple, list):
        args = [a for a in get_args(inner) if a is not Ellipsis]
        if len(args) != 1 or (origin is tuple and len(get_args(inner)) != 2):
            return None  # a fixed-length tuple is not a repeatable option
        element = _shape(args[0])
        if element is None or element.repeats or element.value_type is bool:
            return None
        numbers = element.value_type in (int, float)  # as text: the config reads "0.25,0.5" as two
        return _Shape(str if numbers else element.value_type, element.choices, repeats=True)
    if inner is dt.date:
        return _Shape(str)
    if inner is bool or inner in _PLAIN:
        return _Shape(inner)
    return None


def _bounds(info: FieldInfo) -> dict[str, Any]:
    """The field's ``ge``/``gt``/``le``/``lt`` as the option's ``min``/``max`` (the config refuses an open end)."""
    found: dict[str, Any] = {}
    for item in [*info.metadata, *_bare(info.annotation)[1]]:
        if isinstance(item, Ge | Gt):
            found["min"] = item.ge if isinstance(item, Ge) else item.gt
        elif isinstance(item, Le | Lt):
            found["max"] = item.le if isinstance(item, Le) else item.lt
    return found


def _help(info: FieldInfo, shape: _Shape) -> str:
    text = " ".join((info.description or "").split())
    if shape.choices and not all(choice in text for choice in shape.choices):
        text = f"{text} One of: {', '.join(shape.choices)}.".strip()
    if shape.repeats and "repeat" not in text:
        text += " (repeatable)"
    return escape(text)


def _declared(declared: type[Declaration], field: str, info: FieldInfo, shape: _Shape) -> tuple[Any, Any, Any]:
    """(annotation, default, typer declaration) of one option."""
    spelled = option_of(field, declared.input_options)
    help_text, required = _help(info, shape), info.is_required()
    if shape.repeats:  # None: the config's own default
        return types.GenericAlias(list, (shape.value_type,)) | None, None, typer.Option(spelled, help=help_text)
    if shape.value_type is bool:
        flag = spelled if "/" in spelled or field in declared.input_options else f"{spelled}/--no-{spelled[2:]}"
        default = inspect.Parameter.empty if required else info.default
        return bool, default, typer.Option(flag, help=help_text)
    value = None if required or info.default_factory is not None else info.default
    value = value.isoformat() if isinstance(value, dt.date) else value
    annotation = shape.value_type if value is not None or required else shape.value_type | None
    default = inspect.Parameter.empty if required else value
    return annotation, default, typer.Option(spelled, help=help_text, **_bounds(info))


def _argument(field: str, info: FieldInfo, shape: _Shape, metavar: str) -> ConfigOption:
    """A positional argument (``metavar`` as help and errors name it; repeatable for a tuple or list field). One
    with choices is optional to typer, so that a missing one is our one-line error naming them; any other is as
    required as its field."""
    shown = _Shape(shape.value_type, shape.choices)  # DIR... says it repeats
    declared = typer.Argument(metavar=metavar, help=_help(info, shown), show_default=False)
    required = info.is_required() and not shape.choices
    value_type: Any = types.GenericAlias(list, (shape.value_type,)) if shape.repeats else shape.value_type
    value_type = value_type if required else value_type | None
    annotation: Any = Annotated[value_type, declared]
    default = inspect.Parameter.empty if required else None
    parameter = inspect.Parameter(
        field, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=annotation, default=default
    )
    return ConfigOption(field, metavar, parameter, shape.choices or ())


def _config_option(declared: type[Declaration], field: str, info: FieldInfo, rules: Rules) -> ConfigOption | None:
    if rules.model_field and field == "model":  # --model/-m, the spec list every command spells alike
        parameter = inspect.Parameter("model", inspect.Parameter.KEYWORD_ONLY, annotation=ModelOpt, default=None)
        return ConfigOption(field, "--model", parameter)
    shape = _shape(info.annotation, info.metadata)
    if shape is None or field in rules.taken or field in getattr(declared, "internal_fields", ()):
        return None
    if field in declared.arguments:  # named in capitals: its input_options entry (DIR), else the field's name
        return _argument(field, info, shape, declared.input_options.get(field, field.upper()))
    option = option_of(field, declared.input_options).split("/")[0]  # --aliases for --aliases/--no-aliases
    annotation, default, typer_option = _declared(declared, field, info, shape)
    name = option.removeprefix("--").replace("-", "_")
    name = field if rules.by_field or keyword.iskeyword(name) else name  # --from: from_run
    parameter = inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[annotation, typer_option], default=default
    )
    return ConfigOption(field, option, parameter, shape.choices or ())


@dataclass(frozen=True)
class Rules:
    """How a declaration's fields become a command's parameters."""

    taken: frozenset[str] = _TAKEN
    """Fields the command offers itself (a lens run's ``--model``, ``--out`` and model options): not from the config."""
    by_field: bool = False
    """Parameters named after their fields (a tool's ``from_options`` takes them so), else after their options;
    and in field order, arguments among the options (a lens run's arguments come first)."""
    model_field: bool = False
    """The config's ``model`` field is the ``--model``/``-m`` spec list, at its place among the options."""


def config_options(declared: type[Declaration], rules: Rules = Rules()) -> list[ConfigOption]:
    """The options (arguments first) a declaration's config offers on its generated command, in field order."""
    found = [_config_option(declared, f, info, rules) for f, info in declared.config_type.model_fields.items()]
    offered = [option for option in found if option is not None]
    if rules.by_field:
        return offered
    return sorted(offered, key=lambda o: o.parameter.kind != inspect.Parameter.POSITIONAL_OR_KEYWORD)


def build_config(
    declared: type[Declaration], offered: list[ConfigOption], values: dict[str, Any], models: list[str] | None = None
) -> BaseModel:
    """The config from the command's values (``models`` into a ``models`` field); a refused value is one error
    line naming its option, a missing argument says what it may be."""
    chosen = {o.field: values[o.parameter.name] for o in offered if values.get(o.parameter.name) is not None}
    for argument in (o for o in offered if o.field in declared.arguments and o.field not in chosen):
        if declared.config_type.model_fields[argument.field].is_required():
            example = f" (e.g. `chronoprobe {declared.name} run {argument.choices[0]}`)" if argument.choices else ""
            choices = f"; give one of {', '.join(argument.choices)}{example}" if argument.choices else ""
            raise ConfigError(argument.option, f"missing{choices}")
    config_type = declared.config_type
    if isinstance(declared, type) and issubclass(declared, Lens):  # a lens run: its models travel in its config
        config_type = with_models(config_type)
    if models and "models" in config_type.model_fields:
        chosen["models"] = tuple(models)
    names = {o.field: o.option for o in offered}

    def name_of(location: tuple[str | int, ...]) -> str:
        field = innermost_field(location)
        return f"{declared.name} run" if field is None else names.get(field, "--" + field.replace("_", "-"))

    try:
        return config_type(**chosen)
    except ValidationError as exc:
        raise config_error(exc, name_of) from None


def command_parameters(offered: list[ConfigOption], out_help: str) -> list[inspect.Parameter]:
    """The generated command's parameters: the arguments, ``--model``, the config's options, ``--out``, the model options."""
    arguments = [o.parameter for o in offered if o.parameter.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
    options = [o.parameter for o in offered if o.parameter.kind == inspect.Parameter.KEYWORD_ONLY]
    keyword = inspect.Parameter.KEYWORD_ONLY
    out = Annotated[Path | None, typer.Option(help=out_help)]
    return [
        *arguments,
        inspect.Parameter("model", keyword, annotation=ModelOpt, default=None),
        *options,
        inspect.Parameter("out", keyword, annotation=out, default=None),
        inspect.Parameter("backend", keyword, annotation=ModelOptions, default=DEFAULT_MODEL_OPTIONS),
    ]


def lens_command(lens: type[Lens[Any]]) -> Callable[..., None]:
    """The ``run`` command of ``lens``: its config's options, ``--model``, ``--out`` and the model options it uses,
    and the older spellings of its renamed options (``lens.renamed_options``), kept for a release."""
    offered = config_options(lens)

    def run(**values: Any) -> None:
        from chronoprobe.cli.runs import run_lens

        models: list[str] | None = values.pop("model")
        out: Path | None = values.pop("out")
        backend: ModelOptions = values.pop("backend")
        with blame(lens, "failed to take its options"):
            instance = lens(build_config(lens, offered, values, models))
        run_lens(instance, out, backend)

    out_help = (
        f"Where to write the report folder (default: a new results/{lens.name}/<model>-<timestamp>; "
        "an earlier report there is replaced, any other folder refused)."
    )
    run.__signature__ = inspect.Signature(command_parameters(offered, out_help))  # type: ignore[attr-defined]  # read by typer
    run.__doc__ = (inspect.getdoc(lens) or f"Run the {lens.name} lens.").splitlines()[0] + (
        " Writes a report folder (run.json, items.jsonl, report.md)."
    )
    return with_deprecated(lens.renamed_options)(with_model_options(*sorted(lens.unused_model_options))(run))


def lens_app(lens: type[Lens[Any]]) -> typer.Typer:
    """``chronoprobe <lens>``: a group holding the lens's generated ``run`` command (``tool_command.lens_group`` adds its tools)."""
    summary = lens.command_help or (inspect.getdoc(lens) or f"The {lens.name} lens.").splitlines()[0]
    group = typer.Typer(help=summary, no_args_is_help=True)
    group.command("run")(lens_command(lens))
    for alias, help_line in lens.command_aliases.items():
        group.command(alias, help=help_line)(lens_command(lens))
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
