"""The package layering that docs/architecture.md describes, checked on the source.

Lower layers (models, knowledge, datasets, metrics, judges, reports, ...) must not
import a lens, the runner, the Python API or the CLI, not even lazily inside a function: that is
how cycles such as datasets -> recency -> datasets creep in.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import chronoprobe

PACKAGE = Path(chronoprobe.__file__).parent
LENSES = {"outdated", "conflicts", "recency", "editing"}
BUILDS_ON = {"editing": {"outdated"}}
"""The one lens that uses another: editing re-runs the outdated audit (its facts, prompts and judge), as DyKnow §4 builds on §3."""
ABOVE_THE_FOUNDATION = LENSES | {"lens", "runner", "api", "cli"}


def _imports() -> dict[str, set[str]]:
    """Top-level part of ``chronoprobe`` (package or module) -> the parts it imports."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        part = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        targets = graph.setdefault(part, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                pieces = name.split(".")
                if pieces[0] == "chronoprobe" and len(pieces) > 1 and pieces[1] != part:
                    targets.add(pieces[1])
    return graph


def test_the_foundation_imports_no_lens_runner_or_cli() -> None:
    graph = _imports()
    offending = {
        part: sorted(targets & ABOVE_THE_FOUNDATION)
        for part, targets in graph.items()
        if part not in ABOVE_THE_FOUNDATION | {"__init__", "__main__"} and targets & ABOVE_THE_FOUNDATION
    }
    assert offending == {}


def test_lenses_do_not_import_each_other_or_the_cli() -> None:
    graph = _imports()
    offending = {
        lens: sorted(graph[lens] & ((LENSES - {lens} - BUILDS_ON.get(lens, set())) | {"cli"})) for lens in LENSES
    }
    assert offending == {lens: [] for lens in LENSES}


LENS_NEUTRAL = ["reports", "api.py", "runner.py"]
"""Readers and drivers of every lens: they find lenses through the registry and read their records."""
_LENS_WORD = re.compile(r"(?<![a-z])(" + "|".join(sorted(LENSES)) + r")(?![a-z])")


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


def test_readers_and_drivers_name_no_lens() -> None:
    """A fifth lens needs no change here: results, the card, chronoprobe.load/run and the runner know no lens."""
    files = [
        p
        for name in LENS_NEUTRAL
        for p in ((PACKAGE / name).rglob("*.py") if (PACKAGE / name).is_dir() else [PACKAGE / name])
    ]
    assert len(files) >= 5
    assert [hit for path in files for hit in _lens_names_in(path)] == []
