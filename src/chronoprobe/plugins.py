"""Where lenses are found: the built-in :data:`LENSES` table and the ``chronoprobe.lenses`` entry points; and
where backends from other packages are found: the ``chronoprobe.backends`` entry points (:func:`backend_plugins`,
read by ``models.registry`` beside its built-in ``BACKENDS`` table).

A package outside chronoprobe adds a question by declaring, in its own ``pyproject.toml``::

    [project.entry-points."chronoprobe.lenses"]
    mylens = "mypackage.lens:MyLens"

Both sources name a class by ``module:attribute`` and it is imported only when used, so this
module imports no lens: the readers (``chronoprobe results``, the card, ``chronoprobe.load``) and
the runner find every lens here without knowing any of them.

A backend's entry point names its ``BackendKind`` the same way, under its spec kind::

    [project.entry-points."chronoprobe.backends"]
    echo = "mypackage.echo:ECHO"

A plug-in's failures are its own: anything its import or its stages raise (``SystemExit``
included) becomes a :class:`~chronoprobe.errors.PluginError` naming the entry point and its
distribution, raised only by the commands that use it (:func:`load`, :class:`blame`; for a backend,
the commands whose ``--model`` names its kind).
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from chronoprobe.errors import ChronoprobeError, ConfigError, PluginError

ENTRY_POINT_GROUP = "chronoprobe.lenses"
BACKEND_GROUP = "chronoprobe.backends"

LENSES: dict[str, str] = {
    "outdated": "chronoprobe.lenses.outdated.lens:OutdatedLens",
    "conflicts": "chronoprobe.lenses.conflicts.lens:ConflictsLens",
    "recency": "chronoprobe.lenses.recency.lens:RecencyLens",
    "editing": "chronoprobe.lenses.editing.lens:EditingLens",
}
"""Lens name -> ``module:attribute``, imported only when the lens is used; the order readers show lenses in."""

OLD_LAYOUTS = "chronoprobe.lenses.old_layouts"
"""The one reader of the summary layouts the built-in lenses wrote before metric records (``summary.json``, a run
log's ``summary.detail``): imported by name, as the lenses are, so the run log's reader imports no lens."""


@dataclass(frozen=True)
class Plugin:
    """One ``chronoprobe.lenses`` (or ``chronoprobe.backends``) entry point and the distribution that declares it."""

    name: str
    target: str
    """``module:attribute``."""
    distribution: str | None = None
    version: str | None = None
    summary: str = ""
    """The distribution's one-line summary (its metadata), shown by ``chronoprobe --help``."""
    role: str = "lens"
    """What it plugs in, as messages name it: ``lens`` or ``backend``."""

    @property
    def origin(self) -> str:
        """``toy-lens 0.1``: the distribution and its version."""
        if self.distribution is None:
            return "unknown distribution"
        return f"{self.distribution} {self.version}" if self.version else self.distribution

    @property
    def label(self) -> str:
        """How every message names it: ``lens plug-in 'toy' (toy-lens 0.1)``."""
        return f"{self.role} plug-in {self.name!r} ({self.origin})"


def entry_point_lenses() -> dict[str, str]:
    """Lens name -> ``module:attribute`` from the installed packages' ``chronoprobe.lenses`` entry points."""
    return {name: plugin.target for name, plugin in entry_point_plugins().items()}


def entry_point_plugins(group: str = ENTRY_POINT_GROUP) -> dict[str, Plugin]:
    """Every entry point of ``group`` by name; where two distributions declare one name, the first on sys.path."""
    found: dict[str, Plugin] = {}
    for plugin in _scan(tuple(sys.path))[group]:
        found.setdefault(plugin.name, plugin)
    return found


def backend_plugins() -> dict[str, Plugin]:
    """Every ``chronoprobe.backends`` entry point by spec kind (``models.registry`` leaves out a built-in kind)."""
    return entry_point_plugins(BACKEND_GROUP)


_ROLES = {ENTRY_POINT_GROUP: "lens", BACKEND_GROUP: "backend"}


@functools.lru_cache(maxsize=4)
def _scan(search_path: tuple[str, ...]) -> dict[str, tuple[Plugin, ...]]:
    # Reading every installed distribution's metadata takes milliseconds, and the readers look lenses up
    # several times per run folder: scan once per search path (a folder put on sys.path is seen), both groups.
    points = importlib.metadata.entry_points()
    return {
        group: tuple(_plugin(point, role) for point in points.select(group=group)) for group, role in _ROLES.items()
    }


def _plugin(point: importlib.metadata.EntryPoint, role: str) -> Plugin:
    dist = point.dist
    if dist is None:
        return Plugin(point.name, point.value, role=role)
    metadata = dist.metadata
    summary = (metadata.json.get("summary") or "") if metadata is not None else ""
    return Plugin(point.name, point.value, dist.name, dist.version, " ".join(str(summary).split()), role)


def registered() -> dict[str, str]:
    """Every lens, by name: the built-in table first, then the entry points (a built-in name wins)."""
    plugged = entry_point_lenses()
    return {**LENSES, **{name: plugged[name] for name in sorted(plugged) if name not in LENSES}}


def names() -> list[str]:
    """The registered lens names: the built-in table in its order, then the entry points by name."""
    return list(registered())


def plugins() -> dict[str, Plugin]:
    """The entry points that are lenses (a name the built-in table has is not one), by name."""
    return {name: plugin for name, plugin in sorted(entry_point_plugins().items()) if name not in LENSES}


_ORIGIN: dict[type, Plugin] = {}
"""Every class :func:`load` imported from an entry point, and that entry point: what :class:`blame` blames."""


def load(name: str) -> Any:
    """The class registered as lens ``name``, imported now; ConfigError naming the known ones otherwise.

    A plug-in that fails to import (any exception, ``SystemExit`` included) is a PluginError naming it.
    """
    path = registered().get(name)
    if path is None:
        raise ConfigError("lens", f"{name!r} is not a lens; known: {', '.join(sorted(registered()))}")
    plugin = plugins().get(name)
    if plugin is None:  # the built-in table: chronoprobe's own code, whose failures are chronoprobe bugs
        return _import(path)
    with blame(plugin, "failed to import"):
        found = _import(path)
    if isinstance(found, type):
        _ORIGIN[found] = plugin
    return found


def old_layouts() -> Any:
    """The module that reads a folder written before metric records (:data:`OLD_LAYOUTS`), imported now."""
    return importlib.import_module(OLD_LAYOUTS)


def _import(path: str) -> Any:
    module, _, attribute = path.partition(":")
    found = importlib.import_module(module)
    for part in attribute.split(".") if attribute else ():
        found = getattr(found, part)
    return found


def plugin_of(owner: object) -> Plugin | None:
    """The entry point a lens class (or an instance of one) was loaded from; None for a built-in lens."""
    cls = owner if isinstance(owner, type) else type(owner)
    for klass in cls.__mro__:
        if klass in _ORIGIN:
            return _ORIGIN[klass]
    return None


def describe(exc: BaseException) -> str:
    """``RuntimeError: first line of its message``: an exception in one line."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:300]}" if lines else type(exc).__name__


class blame:  # a context manager, named like the contextlib ones
    """``with blame(lens, "failed in run()"):``: what a plug-in raises there is a PluginError naming it.

    ``owner`` is a :class:`Plugin`, or a lens class or instance (a built-in lens is not blamed:
    its errors pass unchanged). A ChronoprobeError passes unchanged (the plug-in's own one-line
    message, or one from chronoprobe's layers), and so does Ctrl-C.
    """

    def __init__(self, owner: object, stage: str) -> None:
        self.plugin = owner if isinstance(owner, Plugin) else plugin_of(owner)
        self.stage = stage

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> Literal[False]:
        if self.plugin is None or exc is None or isinstance(exc, (ChronoprobeError, KeyboardInterrupt)):
            return False
        raise PluginError(self.plugin.label, f"{self.stage}: {describe(exc)}") from exc


def unloadable(plugin: Plugin) -> str | None:
    """Why ``plugin`` cannot load, found without running any of its code (None when nothing says so).

    For ``chronoprobe --help``, which lists plug-ins without importing them: a module that is not
    there, a source file that does not parse, an attribute its module never defines. What only
    running it shows (an import that raises) surfaces in its own command.
    """
    module, _, attribute = plugin.target.partition(":")
    spec = _find_spec(module)
    if spec is None:
        return f"no module named {module!r}"
    origin = getattr(spec, "origin", None)
    if not (isinstance(origin, str) and origin.endswith(".py")):
        return None  # compiled, built in or a namespace: nothing to read
    try:
        tree = ast.parse(Path(origin).read_bytes(), filename=origin)
    except (OSError, SyntaxError, ValueError) as exc:
        return describe(exc)
    first = attribute.split(".")[0]
    if first and not _may_define(tree.body, first):
        return f"module {module!r} has no attribute {first!r}"
    return None


def _find_spec(module: str) -> Any:
    """The module's spec, found the way import finds it but without running a parent package's ``__init__``."""
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    try:
        spec = importlib.util.find_spec(parts[0])  # a top-level name imports nothing
        for part in parts[1:]:
            locations = getattr(spec, "submodule_search_locations", None)
            if spec is None or locations is None:
                return None
            spec = importlib.machinery.PathFinder.find_spec(part, list(locations))
    except (ImportError, ValueError):
        return None
    return spec


def _may_define(body: list[ast.stmt], name: str) -> bool:
    """Whether module-level code might bind ``name`` (a star import or a module ``__getattr__`` might)."""
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if statement.name in (name, "__getattr__"):
                return True
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            for alias in statement.names:
                if alias.name == "*" or (alias.asname or alias.name.split(".")[0]) == name:
                    return True
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if any(isinstance(n, ast.Name) and n.id in (name, "__getattr__") for t in targets for n in ast.walk(t)):
                return True
        elif isinstance(statement, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            nested = [*statement.body, *getattr(statement, "orelse", []), *getattr(statement, "finalbody", [])]
            nested += [s for handler in getattr(statement, "handlers", []) for s in handler.body]
            if _may_define(nested, name):
                return True
        elif isinstance(statement, (ast.Expr, ast.Pass)):
            continue
        elif any(isinstance(n, ast.NamedExpr) for n in ast.walk(statement)) or isinstance(statement, ast.Match):
            return True  # rare forms: do not guess
    return False
