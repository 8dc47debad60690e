"""The lens shape and the name -> lazy import tables for lenses and backends."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from chronoprobe.contract.lens import LENSES, Lens, Summary, lens_class, lens_config_class
from chronoprobe.errors import ConfigError
from chronoprobe.lenses import old_layouts
from chronoprobe.models.registry import BACKENDS, backend_kind, parse_model_spec


@pytest.mark.parametrize("name", sorted(LENSES))
def test_every_lens_in_the_table_has_the_shape(name: str) -> None:
    cls = lens_class(name)
    assert issubclass(cls, Lens) and cls.name == name
    assert issubclass(cls.row_type, BaseModel) and issubclass(lens_config_class(name), BaseModel)
    assert cls.kind in {"outdated run", "recency eval", "conflicts run", "editing run"}
    for stage in ("load", "check", "run", "summarise", "recipe", "report"):
        assert callable(getattr(cls, stage))


@pytest.mark.e2e
def test_lenses_are_imported_only_when_asked_for() -> None:
    code = (
        "import sys, chronoprobe.contract.lens as l; before = [m for m in l.LENSES.values() if m.split(':')[0] in sys.modules]; "
        "l.lens_class('recency'); print(before, 'chronoprobe.lenses.recency.lens' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[] True"


def test_an_unknown_lens_is_a_one_line_config_error() -> None:
    with pytest.raises(ConfigError, match=r"'fixing' is not a lens; known: conflicts, editing, outdated, recency"):
        lens_class("fixing")


def test_every_backend_is_one_registration_with_a_loader() -> None:
    assert list(BACKENDS) == ["smollm2", "gemma3-270m", "hf", "gguf", "llamacpp", "vllm", "openai", "mock"]
    for kind in BACKENDS:
        registration = backend_kind(kind)
        assert registration.kind == kind and registration.forms, kind
        module, _, function = registration.load.partition(":")
        assert callable(getattr(importlib.import_module(module), function))
    assert {parse_model_spec(alias).kind for alias in ("smollm2", "default")} == {"smollm2"}


def _old_layout(kind: str, layout: dict[str, Any]) -> Summary:
    found = old_layouts.file_summary(layout, kind, Path("old/summary.json"))
    assert found is not None and found[1] == kind
    return found[2]


def test_the_summary_reads_back_from_each_lens_layout() -> None:
    outdated = _old_layout(
        "outdated run",
        {
            "as_of": None,
            "overall_key": "all",
            "models": {
                "m": {
                    "per_category": {
                        "all": {
                            "soft_constraint_pct": {
                                "up-to-date": 50.0,
                                "outdated": 25.0,
                                "irrelevant": 25.0,
                                "ambiguous": 0.0,
                            }
                        }
                    }
                }
            },
        },
    )
    assert isinstance(outdated, Summary) and outdated.headline["m"]["soft_constraint_pct.up-to-date"] == 50.0
    conflicts = _old_layout("conflicts run", {"classes": ["static"], "summary": {"m": {"static": {"cp": 0.5, "n": 3}}}})
    assert conflicts.headline == {"m": {"static.cp": 0.5}}
    recency = _old_layout(
        "recency eval", {"runs": [{"model": "m", "strategy": "zero-shot", "context_mode": "with", "accuracy": 0.25}]}
    )
    assert recency.headline["m"]["zero-shot.with.accuracy"] == 0.25 and recency.models == ["m"]
