"""The package layering that docs/architecture.md describes, checked on the source.

Lower layers (models, knowledge, datasets, metrics, judges, reports, ...) must not
import a lens, the runner, the Python API or the CLI, not even lazily inside a function: that is
how cycles such as datasets -> recency -> datasets creep in.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import chronoprobe

PACKAGE = Path(chronoprobe.__file__).parent
LENS_NAMES = {"outdated", "conflicts", "recency", "editing"}
LENSES = {f"lenses.{name}" for name in LENS_NAMES}
BUILDS_ON = {"lenses.editing": {"lenses.outdated"}}
"""The one lens that uses another: editing re-runs the outdated audit (its facts, prompts and judge), as DyKnow §4 builds on §3."""
ENTRY_POINTS = {"api", "checkup", "cli", "integrations", "__main__"}
"""``integrations``: the inspect_ai tasks, the lm-eval export and the harness log readers; ``checkup``:
``chronoprobe check``, which drives every lens."""
CONTRACT_ABOVE = {"contract.lens", "contract.tool", "contract.runner", "contract.lens_run"}
"""The shapes and the runner of the run contract (and a lens run as a command); the records and publishing it builds on
(``chronoprobe.records``) sit with the calls layer, where the readers below the lenses use them."""
OLD_LAYOUTS = {"lenses.old_layouts"}
"""The one reader of the built-in lenses' layouts from before metric records: it reads each lens's, so it sits above
them (``records.runlog`` finds it by name, through ``plugins``, as it finds the lenses)."""
ABOVE_THE_FOUNDATION = LENSES | CONTRACT_ABOVE | ENTRY_POINTS | OLD_LAYOUTS
SPLIT = {"lenses", "contract"}
"""Packages whose parts are layered one by one: ``lenses.outdated``, ``contract.lens``."""


def _part_of(parts: tuple[str, ...]) -> str:
    """The layered part a module belongs to: its top-level name, or ``lenses.<lens>``/``contract.<module>``."""
    if parts[0] in SPLIT and len(parts) > 1 and parts[1] != "__init__":
        return f"{parts[0]}.{parts[1]}"
    return parts[0]


def _imports() -> dict[str, set[str]]:
    """Layered part of ``chronoprobe`` (package or module) -> the parts it imports."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        part = _part_of(path.relative_to(PACKAGE).with_suffix("").parts)
        targets = graph.setdefault(part, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                pieces = name.split(".")
                if pieces[0] == "chronoprobe" and len(pieces) > 1:
                    target = _part_of(tuple(pieces[1:]))
                    if target != part:
                        targets.add(target)
    return graph


@pytest.mark.slow
def test_the_foundation_imports_no_lens_runner_or_cli() -> None:
    graph = _imports()
    offending = {
        part: sorted(targets & ABOVE_THE_FOUNDATION)
        for part, targets in graph.items()
        if part not in ABOVE_THE_FOUNDATION | {"__init__", "__main__"} and targets & ABOVE_THE_FOUNDATION
    }
    assert offending == {}


@pytest.mark.slow
def test_lenses_do_not_import_each_other_or_the_cli() -> None:
    graph = _imports()
    offending = {
        lens: sorted(graph[lens] & ((LENSES - {lens} - BUILDS_ON.get(lens, set())) | {"cli", "integrations"}))
        for lens in LENSES
    }
    assert offending == {lens: [] for lens in LENSES}


def _module_imports() -> dict[str, set[str]]:
    """Module of ``chronoprobe`` -> the modules of ``chronoprobe`` it imports, lazily or for type checking alike.

    ``from a import b`` counts as an import of ``a.b`` where that is a module, else of ``a``. The
    package root imports its public surface by name on first use (and only for type checking in
    its source), so it is left out as an importer (the release is ``chronoprobe.version``'s, a leaf).
    """
    files = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        if module == "chronoprobe":
            continue
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        targets = graph.setdefault(module, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                source = ".".join([*base, node.module] if node.module else base)
                names = [
                    f"{source}.{alias.name}" if f"{source}.{alias.name}" in files else source for alias in node.names
                ]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                while name and name not in files:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    targets.add(name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph.get(module, ()):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


@pytest.mark.slow
def test_the_module_graph_has_no_import_cycles() -> None:
    """Where two modules need each other, one of them (or a third) should own what both use."""
    assert _cycles(_module_imports()) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


LENS_NEUTRAL = ["reports", "api.py", "contract/runner.py", "checkup"]
"""Readers and drivers of every lens: they find lenses through the registry and read their records."""
_LENS_WORD = re.compile(r"(?<![a-z])(" + "|".join(sorted(LENS_NAMES)) + r")(?![a-z])")


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
        if isinstance(node, (ast.Module, ast.ClassDef)):  # attribute docstrings: a string after an assignment
            for before, after in zip(node.body, node.body[1:], strict=False):
                if isinstance(before, (ast.Assign, ast.AnnAssign)) and isinstance(after, ast.Expr):
                    found.add(id(after.value))
    return found


def _lens_names_in(path: Path) -> list[str]:
    """Lens names used as identifiers, imported modules or string values (docstrings and comments aside)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        texts: list[str] = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            texts = [node.value]
        elif isinstance(node, ast.Name):
            texts = [node.id]
        elif isinstance(node, ast.Attribute):
            texts = [node.attr]
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.arg)):
            texts = [node.name if not isinstance(node, ast.arg) else node.arg]
        elif isinstance(node, ast.ImportFrom):
            texts = [node.module or "", *(alias.name for alias in node.names)]
        elif isinstance(node, ast.Import):
            texts = [alias.name for alias in node.names]
        line = getattr(node, "lineno", 0)
        found += [f"{path.name}:{line}: {text!r}" for text in texts if _LENS_WORD.search(text.lower())]
    return found


@pytest.mark.slow
def test_readers_and_drivers_name_no_lens() -> None:
    """A fifth lens needs no change here: results, the card, chronoprobe.load/run and the runner know no lens."""
    files = [
        p
        for name in LENS_NEUTRAL
        for p in ((PACKAGE / name).rglob("*.py") if (PACKAGE / name).is_dir() else [PACKAGE / name])
    ]
    assert len(files) >= 5
    assert [hit for path in files for hit in _lens_names_in(path)] == []


FLOORS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("version", "errors", "io", "paths", "retry", "threads", "plugins", "progress_lines",
                    "progress_bars", "tables", "values", "renames", "moved", "docs_pages")),
    ("models", ("models", "testing")),
    ("calls and records", ("cache", "cache_admin", "estimate", "engines", "provenance", "records")),
    ("data and scoring", ("knowledge", "datasets", "metrics", "judges", "router", "reports", "testing.wdqs",
                          "testing.wdqs_data")),
    ("lenses", ("contract", "lenses")),
    ("entry points", ("checkup", "api", "cli", "integrations", "__main__", "")),
]  # fmt: skip
"""docs/architecture.md's floors, bottom up, by module name under ``chronoprobe`` (the longest prefix decides:
``testing.wdqs``, the WDQS stand-in, reads ``knowledge/`` and sits with the data; ``""`` is the package face)."""


def _floor(module: str) -> int:
    name = module.removeprefix("chronoprobe").removeprefix(".")
    found = [
        (len(prefix), floor)
        for floor, (_, prefixes) in enumerate(FLOORS)
        for prefix in prefixes
        if name == prefix or (prefix and name.startswith(prefix + "."))
    ]
    assert found, f"{module} is on no floor of FLOORS"
    return max(found)[1]


@pytest.mark.slow
def test_no_import_points_up_a_floor() -> None:
    """A module imports only from its own floor or the floors below, lazily inside a function too."""
    up = sorted(
        f"{module} ({FLOORS[_floor(module)][0]}) imports {target} ({FLOORS[_floor(target)][0]})"
        for module, targets in _module_imports().items()
        for target in targets
        if _floor(target) > _floor(module)
    )
    assert up == []


@pytest.mark.slow
def test_every_function_level_import_says_what_it_defers() -> None:
    """Imports sit at the top of their module; one inside a function defers a heavy or optional dependency and a
    comment beside it (or on the line above) says which."""
    bare = []
    for path in PACKAGE.rglob("*.py"):
        lines = path.read_text(encoding="utf-8").splitlines()
        for function in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    said = "#" in lines[node.lineno - 1] or "#" in lines[node.end_lineno - 1]  # type: ignore[operator]
                    if not said and not lines[node.lineno - 2].strip().startswith("#"):
                        bare.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert bare == []


def test_the_floors_are_read_by_the_longest_prefix() -> None:
    assert _floor("chronoprobe.testing.wdqs") > _floor("chronoprobe.testing.mock") == _floor("chronoprobe.models.hf")
    assert (
        _floor("chronoprobe.records.runlog") < _floor("chronoprobe.reports.card") < _floor("chronoprobe.contract.lens")
    )
    assert _floor("chronoprobe") == _floor("chronoprobe.cli.main") == len(FLOORS) - 1
    assert _floor("chronoprobe.version") == 0
