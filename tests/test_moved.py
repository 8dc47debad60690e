"""The modules that moved since 0.1.0 keep the names 0.1.0 released until 0.4.0: the same module, with a warning
naming the new one and the release that removes it; names no release had are gone; and no shim outlives 0.4.0."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import warnings

import pytest

import chronoprobe
from chronoprobe import api
from chronoprobe.contract import runner
from chronoprobe.contract.legacy_spelling import LEGACY_ATTRIBUTES
from chronoprobe.contract.lens import lens_class, lens_names
from chronoprobe.contract.released_hooks import RELEASED_MEMBERS
from chronoprobe.contract.tool import tool_class, tool_names
from chronoprobe.lenses.recency import lens as recency_lens
from chronoprobe.moved import MOVED, new_name
from chronoprobe.records.fields import spelling
from chronoprobe.version import SHIMS_REMOVED_IN


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("chronoprobe.lens", "chronoprobe.contract.lens"),
        ("chronoprobe.outdated.audit", "chronoprobe.lenses.outdated.audit"),
        ("chronoprobe.runner", "chronoprobe.contract.runner"),
        ("chronoprobe.reports.tidy", "chronoprobe.reports.tidy_table"),
    ],
)
def test_an_old_name_is_the_new_module_with_a_warning(old: str, new: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning) as caught:  # an old parent package, if not yet imported, warns too
        module = importlib.import_module(old)
    said = [str(warned.message) for warned in caught]
    assert any(f"is now {new}; the old name is removed in 0.4.0" in line for line in said), said
    assert module is importlib.import_module(new)


RELEASED_0_1 = {
    "chronoprobe.conflicts",
    "chronoprobe.editing",
    "chronoprobe.lens",
    "chronoprobe.outdated",
    "chronoprobe.publish",
    "chronoprobe.recency",
    "chronoprobe.reports.tidy",
    "chronoprobe.runner",
}
"""The moved modules 0.1.0 had (its tree, commit a6d429d); every other old name came and went before 0.2.0."""
RELEASED_0_2 = {"chronoprobe.contract.fields", "chronoprobe.contract.publish", "chronoprobe.contract.runlog"}
"""0.2.0's record modules, moved down to ``chronoprobe.records`` (issue 41 §5)."""


def test_only_names_a_release_had_keep_an_alias() -> None:
    assert set(MOVED) == RELEASED_0_1 | RELEASED_0_2


@pytest.mark.parametrize(
    "never_released",
    ["chronoprobe.runlog", "chronoprobe.tool", "chronoprobe.progress", "chronoprobe.outdated.records"],
)
def test_a_name_no_release_had_is_not_importable(never_released: str) -> None:
    sys.modules.pop(never_released, None)
    with warnings.catch_warnings(), pytest.raises(ModuleNotFoundError):
        warnings.simplefilter("ignore", DeprecationWarning)  # an old parent package (chronoprobe.outdated) warns first
        importlib.import_module(never_released)


def _release(version: str) -> tuple[int, ...]:
    """``0.3.0.dev0`` -> (0, 3, 0): the release a version is, or leads to."""
    return tuple(int(part) for part in version.split(".")[:3])


def _shims_left() -> list[str]:
    """Every older spelling still taken: module aliases, config keywords, CLI flags, ``cp.run(model=)``."""
    commands = [lens_class(name) for name in lens_names()] + [tool_class(name) for name in tool_names()]
    configs = {command.config_type for command in commands}
    keywords = [f"{c.__name__}.{old}" for c in configs for old in getattr(c, "renamed_fields", {})]
    flags = [f"{c.__name__} {old}" for c in commands for old in spelling(c.config_type).command.renamed_options]
    lens_attributes = [f"Lens.{name}" for name in LEGACY_ATTRIBUTES]  # 0.2.0's command line on a plug-in's class
    run_model = ["cp.run(model=)"] if hasattr(api, "_older_models_keyword") else []
    run_model += ["runner.produce(cache=...)"] if hasattr(runner, "_older_keywords") else []
    variable = ["$CHRONOPROBE_RECENCYQA"] if hasattr(recency_lens, "LEGACY_DATA_ENV") else []
    members = [f"Lens.{name}" for name in RELEASED_MEMBERS]  # 0.2.0's card and check members on a plug-in's lens
    return [*MOVED, *keywords, *flags, *lens_attributes, *run_model, *variable, *members]


def _overdue(version: str) -> list[str]:
    """The shims a package at ``version`` must no longer have: every one, from 0.4.0 (its development included)."""
    return _shims_left() if _release(version) >= _release(SHIMS_REMOVED_IN) else []


def test_no_shim_outlives_the_release_that_removes_it() -> None:
    overdue = _overdue(chronoprobe.__version__)
    assert not overdue, f"{chronoprobe.__version__} reaches {SHIMS_REMOVED_IN}; remove: {', '.join(overdue)}"


def test_the_check_reads_the_real_shims_and_fires_at_0_4_0() -> None:
    shims = _shims_left()
    assert _overdue("0.3.9") == [] and _overdue("0.4.0.dev0") == _overdue("0.4.0") == _overdue("1.0.0") == shims
    known = {
        "chronoprobe.lens",
        "AuditConfig.use_aliases",
        "EditingLens --limit",
        "Lens.input_options",
        "cp.run(model=)",
    }
    assert known <= set(shims) or not shims  # read from the real tables, not empty by mistake
    assert "$CHRONOPROBE_RECENCYQA" in shims or not shims
    assert "Lens.plain_words" in shims or not shims


def test_names_that_did_not_move_are_left_alone() -> None:
    assert new_name("chronoprobe.lenses.outdated.audit") is None
    assert new_name("chronoprobe.runner_bars") is None  # not chronoprobe.runner's module
    assert new_name("chronoprobe.lensesx") is None
    assert all(importlib.util.find_spec(target) is not None for target in MOVED.values())


@pytest.mark.e2e
def test_a_plugin_written_for_0_1_still_runs_in_a_fresh_process() -> None:
    """``from chronoprobe.lens import Lens`` and a class from an old lens module: one module object each, so an
    ``isinstance`` across the old and new names holds."""
    code = (
        "import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
        "import chronoprobe.contract.lens as new\n"
        "try:\n    import chronoprobe.lens\nexcept DeprecationWarning as w:\n    print('warned', w)\n"
        "warnings.simplefilter('ignore')\n"
        "from chronoprobe.lens import Lens\n"
        "from chronoprobe.outdated.lens import OutdatedLens\n"
        "print(Lens is new.Lens, issubclass(OutdatedLens, new.Lens))\n"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "warned chronoprobe.lens is now chronoprobe.contract.lens" in shown
    assert shown.strip().endswith("True True")
