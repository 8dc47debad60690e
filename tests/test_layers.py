"""The package layering that docs/architecture.md describes, checked on the source.

Lower layers (models, knowledge, datasets, metrics, judges, reports, ...) must not
import a lens, the runner, the Python API or the CLI, not even lazily inside a function: that is
how cycles such as datasets -> recency -> datasets creep in.
"""

from __future__ import annotations

import ast
from pathlib import Path

import chronoprobe

PACKAGE = Path(chronoprobe.__file__).parent
LENSES = {"outdated", "conflicts", "recency", "editing"}
BUILDS_ON = {"editing": {"outdated"}}
"""The one lens that uses another: editing re-runs the outdated audit (its facts, prompts and judge), as DyKnow §4 builds on §3."""
ENTRY_POINTS = {"runner", "api", "cli", "integrations"}
"""``integrations``: the inspect_ai tasks, the lm-eval export and the harness log readers."""
ABOVE_THE_FOUNDATION = LENSES | {"lens"} | ENTRY_POINTS


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
        if part not in ABOVE_THE_FOUNDATION | {"__init__"} and targets & ABOVE_THE_FOUNDATION
    }
    assert offending == {}


def test_lenses_do_not_import_each_other_or_the_cli() -> None:
    graph = _imports()
    offending = {
        lens: sorted(graph[lens] & ((LENSES - {lens} - BUILDS_ON.get(lens, set())) | {"cli", "integrations"}))
        for lens in LENSES
    }
    assert offending == {lens: [] for lens in LENSES}
