"""``results/outdated/smollm2`` names the latest ``smollm2-<timestamp>`` run folder (README: ``compare``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronoprobe.errors import DataError
from chronoprobe.paths import latest_named
from chronoprobe.reports.tidy_table import find_runs


def test_the_newest_stamped_folder_of_that_name_and_no_other(tmp_path: Path) -> None:
    lens = tmp_path / "outdated"
    for name in (
        "smollm2-20261201T090000Z",
        "smollm2-20261203T080000Z",
        "smollm2-20261203T080000Z-2",  # a second run within the same second
        "smollm2+qwen-20261209T000000Z",  # two models: another name
        "smollm2-dynamicqa-20261210T000000Z",  # a label after the model: another name
        "smollm22-20261211T000000Z",
    ):
        (lens / name).mkdir(parents=True)
    (lens / "smollm2-20261212T000000Z").write_text("a file, not a run folder")
    assert latest_named(lens / "smollm2") == lens / "smollm2-20261203T080000Z-2"
    assert latest_named(lens / "qwen") is None
    assert latest_named(lens / "smollm2-20261201T090000Z") is None  # exists: itself, not a search
    assert latest_named(tmp_path / "nowhere" / "smollm2") is None


def test_a_missing_folder_says_which_names_it_looked_for(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"no such folder \(nor a run folder named qwen-<timestamp> beside it\)"):
        find_runs([tmp_path / "qwen"])
