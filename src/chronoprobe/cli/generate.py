"""A command's parameters generated from its declaration: one option per config field, for every command.

Every command is a :class:`~chronoprobe.contract.tool.Tool` (a lens run too:
:class:`~chronoprobe.contract.lens_run.LensRun`), and :func:`config_options` reads it one way. Each config field is
one parameter, named as the field and spelled as its flag (:mod:`chronoprobe.records.fields`: ``balanced_limit``
is ``--balanced-limit``; a flag Python or pydantic reserves as a name gets the trailing underscore of PEP 8,
``from_`` for ``--from`` and ``json_`` for ``--json``; ``models`` is ``--model``/``-m``), in the order
:meth:`Tool.fields` gives, with the field's default and its docstring as help. What the name cannot say is the
field's :class:`~chronoprobe.records.fields.Cli` marker: a positional argument, named by its metavar (``DIR``),
a switch, a field not offered. A ``Literal`` field takes one of its
values, a ``bool`` is a ``--x/--no-x`` flag (or ``--x`` alone, marked a switch), a tuple or
list is repeatable (numbers as text, so ``0.25,0.5`` is one value), a mapping declared as
:data:`chronoprobe.values.KeyValues` a repeatable ``NAME=VALUE``. The config parses and checks every value, so
``chronoprobe.produce`` takes the same strings. Beside them, made by the same rules: the model options when the tool
loads models (:func:`model_options`: :class:`~chronoprobe.cli.model_options.ModelOptions`, whose fields'
:class:`~chronoprobe.cli.options.Typed` markers add the check typer runs while it parses, and a backend of another
package's own options), and the older spellings of renamed flags (:mod:`chronoprobe.cli.deprecated`).

A field not marked internal that the command cannot offer (a type no
option can take, or a name a shared model option has) is a :class:`DeclarationError` naming it, raised when the
command is made: no field is left out silently.
"""

from __future__ import annotations

import copy
import datetime as dt
import inspect
import types
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import typer
from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from rich.markup import escape

from chronoprobe.cli.model_options import MODEL_OPTIONS, ModelOptions
from chronoprobe.cli.options import ModelOpt, Typed
from chronoprobe.contract.tool import Tool
from chronoprobe.errors import ConfigError
from chronoprobe.models.registry import ModelRequest, plugged_backend_kinds
from chronoprobe.records.fields import Cli, flag_of, spelling
from chronoprobe.values import key_values

__all__ = ["ConfigOption", "DeclarationError", "check_arguments", "config_options", "field_option", "model_options"]

_PLAIN = (str, int, float, Path)


class DeclarationError(TypeError):
    """A declaration whose command cannot be made: a config field the command cannot offer, named. A bug in the
    declaration (a plug-in's is blamed on the plug-in), never a user's error."""


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


def _typed(info: FieldInfo) -> Typed:
    """The field's :class:`~chronoprobe.cli.options.Typed` marker (none: the generator's own rules alone)."""
    return next((item for item in info.metadata if isinstance(item, Typed)), Typed())


def _declared(field: str, cli: Cli, info: FieldInfo, shape: _Shape) -> tuple[Any, Any, Any]:
    """(annotation, default, typer declaration) of one option."""
    spelled, typed = flag_of(field), _typed(info)
    help_text = escape(" ".join(typed.help().split())) if typed.help is not None else _help(info, shape)
    required = info.is_required()
    if shape.repeats:  # None: the config's own default
        return types.GenericAlias(list, (shape.value_type,)) | None, None, typer.Option(spelled, help=help_text)
    if shape.value_type is bool:
        flag = spelled if cli.switch else f"{spelled}/--no-{spelled[2:]}"
        default = inspect.Parameter.empty if required else info.default
        annotation = bool | None if default is None else bool  # None: neither flag given
        return annotation, default, typer.Option(flag, help=help_text, **typed.option_settings())
    value = None if required or info.default_factory is not None else info.default
    value = value.isoformat() if isinstance(value, dt.date) else value
    annotation = shape.value_type if value is not None or required else shape.value_type | None
    default = inspect.Parameter.empty if required else value
    return annotation, default, typer.Option(spelled, help=help_text, **_bounds(info), **typed.option_settings())


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


def field_option(owner: str, config_type: type[BaseModel], field: str, info: FieldInfo) -> ConfigOption:
    """The parameter of one field of ``config_type``, as its markers spell it; a DeclarationError naming ``owner``
    and the field when no option can take it."""
    if field == "models":  # --model/-m, the spec list every command spells alike
        parameter = inspect.Parameter("models", inspect.Parameter.KEYWORD_ONLY, annotation=ModelOpt, default=None)
        return ConfigOption(field, "--model", parameter)
    shown = _typed(info).shown
    shape = _Shape(shown) if shown is not None else _shape(info.annotation, info.metadata)
    if shape is None:
        raise DeclarationError(
            f"{owner}: config field {field!r} ({info.annotation}) has a type no option can take; "
            "offer it as text, or mark it internal (chronoprobe.records.fields.INTERNAL)"
        )
    cli = spelling(config_type).fields[field]
    if cli.argument:  # named by its metavar, in capitals (DIR)
        return _argument(field, info, shape, cli.argument)
    annotation, default, typer_option = _declared(field, cli, info, shape)
    parameter = inspect.Parameter(
        field, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[annotation, typer_option], default=default
    )
    return ConfigOption(field, flag_of(field), parameter, shape.choices or ())


def config_options(tool: type[Tool[Any]]) -> list[ConfigOption]:
    """The parameters a tool's config offers on its command, in :meth:`Tool.fields` order (internal fields left out)."""
    fields, internal = tool.config_type.model_fields, spelling(tool.config_type).internal
    offered = [name for name in tool.fields() if name not in internal]
    clash = [name for name in offered if tool.model_options and name in MODEL_OPTIONS]
    if clash:
        raise DeclarationError(
            f"{tool.name}: config field {clash[0]!r} is named like the shared model option --{clash[0]}"
        )
    return [field_option(tool.name, tool.config_type, name, fields[name]) for name in offered]


def model_options(omit: Collection[str] = (), taken: Collection[str] = ()) -> list[ConfigOption]:
    """The shared model options (:class:`~chronoprobe.cli.model_options.ModelOptions`, all but ``omit``), then the
    options a backend of another package declares that no shared option and no name in ``taken`` (the command's
    own options) has: each from its declaration, by the generator that makes a config's (a backend option no
    option can take is left to Python)."""
    unknown = set(omit) - set(MODEL_OPTIONS)
    if unknown:
        raise ValueError(f"not model options: {', '.join(sorted(unknown))}")
    fields = ModelOptions.model_fields
    shared = [field_option("model options", ModelOptions, name, fields[name]) for name in fields if name not in omit]
    return [*shared, *_backend_own_options({*MODEL_OPTIONS, *taken})]


def _backend_own_options(taken: Collection[str]) -> list[ConfigOption]:
    """The options of the backends of other packages (``chronoprobe.backends`` entry points, ``BACKENDS`` rows
    outside chronoprobe) that ``taken`` does not name, help first saying whose they are."""
    found: dict[str, ConfigOption] = {}
    for kind in plugged_backend_kinds():
        for name, info in kind.options.model_fields.items():
            if name in taken or name in found:
                continue
            described = copy.copy(info)
            described.description = f"{kind.kind}: {info.description or 'its own option.'}"
            try:
                found[name] = field_option(f"backend {kind.kind}", kind.options, name, described)
            except DeclarationError:
                continue  # a type no option can take: chronoprobe.run takes it by name
    return list(found.values())


def check_arguments(tool: type[Tool[Any]], offered: list[ConfigOption], values: dict[str, Any]) -> None:
    """A required argument with choices left out: one line saying what it may be (typer takes it as optional)."""
    arguments = spelling(tool.config_type).arguments
    for argument in (o for o in offered if o.field in arguments and values.get(o.field) is None):
        if argument.choices and tool.config_type.model_fields[argument.field].is_required():
            example = f" (e.g. `chronoprobe {tool.command} {argument.choices[0]}`)"
            raise ConfigError(argument.option, f"missing; give one of {', '.join(argument.choices)}{example}")
