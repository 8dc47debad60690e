"""The modules that moved in 0.3 keep their 0.2 names for a release: the same module, with a warning naming the new one."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys

import pytest

from chronoprobe.moved import MOVED, new_name


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("chronoprobe.lens", "chronoprobe.contract.lens"),
        ("chronoprobe.outdated.audit", "chronoprobe.lenses.outdated.audit"),
        ("chronoprobe.outdated.records", "chronoprobe.lenses.outdated.metric_records"),
        ("chronoprobe.reports.tidy_output", "chronoprobe.reports.tidy_formats"),
        ("chronoprobe.progress", "chronoprobe.progress_lines"),
    ],
)
def test_an_old_name_is_the_new_module_with_a_warning(old: str, new: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning) as caught:  # an old parent package, if not yet imported, warns too
        module = importlib.import_module(old)
    assert any(new in str(warned.message) for warned in caught), [str(w.message) for w in caught]
    assert module is importlib.import_module(new)


def test_names_that_did_not_move_are_left_alone() -> None:
    assert new_name("chronoprobe.lenses.outdated.audit") is None
    assert new_name("chronoprobe.progress_bars") is None  # not chronoprobe.progress's module
    assert new_name("chronoprobe.lensesx") is None
    assert all(importlib.util.find_spec(target) is not None for target in MOVED.values())


@pytest.mark.e2e
def test_a_plugin_written_for_0_2_still_runs_in_a_fresh_process() -> None:
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
