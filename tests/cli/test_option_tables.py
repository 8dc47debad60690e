"""Every command's option table (name, type, default, choices, ...) against a reviewed snapshot.

A change to any option shows up here as a diff of ``option_tables.json``. After a deliberate change
(a rename with its deprecated alias, a new option), say it in CHANGELOG.md and rewrite the snapshot:

    CHRONOPROBE_WRITE_OPTION_TABLES=1 .venv/bin/python -m pytest -q tests/cli/test_option_tables.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from chronoprobe.cli.main import _register, app

SNAPSHOT = Path(__file__).with_name("option_tables.json")


def _walk(command: Any, path: list[str], found: dict[str, Any]) -> None:
    children = getattr(command, "commands", None)
    if children:
        for name in sorted(children):
            _walk(children[name], [*path, name], found)
        return
    found[" ".join(path)] = [_param(p) for p in command.params]


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _annotation(param: Any) -> str:
    annotation = param.type_descriptor.annotation
    return (
        getattr(annotation, "__name__", None)
        if isinstance(annotation, type)
        else str(annotation).replace("typing.", "")
    )


def _param(param: Any) -> dict[str, Any]:
    return {
        "name": param.name,
        "kind": "argument" if param.param_type_name == "argument" else "option",
        "opts": sorted(param.opts),
        "secondary": sorted(param.secondary_opts or []),
        "type": _annotation(param),
        "range": [_plain(param.min), _plain(param.max)] if (param.min, param.max) != (None, None) else None,
        "default": None if callable(param.default) else _plain(param.default),
        "multiple": bool(param.multiple),
        "required": bool(param.required),
        "flag": bool(getattr(param, "is_flag", False)),
    }


def option_tables() -> dict[str, Any]:
    import typer.main

    _register()
    found: dict[str, Any] = {}
    _walk(typer.main.get_command(app), [], found)
    return found


def test_option_tables_match_the_reviewed_snapshot() -> None:
    tables = option_tables()
    if os.environ.get("CHRONOPROBE_WRITE_OPTION_TABLES"):
        SNAPSHOT.write_text(json.dumps(tables, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert sorted(tables) == sorted(expected), "commands added or removed"
    for command, params in expected.items():
        assert tables[command] == params, f"options of `chronoprobe {command}` changed"
