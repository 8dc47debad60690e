"""A check folder damaged between two runs (its check.json, a lens folder, its own files) reruns to the folder
an undamaged rerun gives, with no model call asked again: a row per damage, in the style of the bad-input
tables. The kills are ``test_check_resume.py``'s."""

from __future__ import annotations

import gc
import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from check_contents import cached_rows, contents

from chronoprobe.cli.main import main
from cli_driver import run_main

pytestmark = pytest.mark.e2e

ARGS = ["check", "-m", "mock:constant=Paris", "--lens", "outdated", "--lens", "recency"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished two-lens check (``check``) and its call cache, copied by each case."""
    root = tmp_path_factory.mktemp("finished")
    argv = [*ARGS, "--out", str(root / "check"), "--cache", str(root / "c.sqlite")]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["chronoprobe", *argv])
        try:
            main()
        except SystemExit as stopped:
            assert stopped.code in (0, None), argv
    gc.collect()  # the run's call cache closes: its write-ahead log folds into c.sqlite, which the cases copy
    return root


def _write(name: str, text: str) -> Callable[[Path], object]:
    return lambda out: (out / name).write_text(text, encoding="utf-8")


def _remove(name: str) -> Callable[[Path], object]:
    def damage(out: Path) -> None:
        path = out / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()

    return damage


def _unfinished(out: Path) -> None:
    """check.json as a kill between the lenses leaves it: the first lens listed, not complete."""
    record = json.loads((out / "check.json").read_text())
    record.update(complete=False, lenses=record["lenses"][:1], gate=[], paragraphs={}, names={})
    (out / "check.json").write_text(json.dumps(record))


@dataclass(frozen=True)
class Damage:
    name: str
    damage: Callable[[Path], object]
    said: str
    """A line the rerun prints (which lenses it kept)."""


DAMAGE = [
    Damage("check-json-invalid", _write("check.json", "{not json"), "outdated: done, 0 new model calls"),
    Damage("check-json-empty", _write("check.json", ""), "recency: done, 0 new model calls"),
    Damage("check-json-array", _write("check.json", "[1, 2]"), "outdated: done, 0 new model calls"),
    Damage("check-json-other-shape", _write("check.json", '{"format": "x"}'), "outdated: done, 0 new model calls"),
    Damage("check-json-deleted", _remove("check.json"), "outdated: done, 0 new model calls"),
    Damage("check-json-unfinished", _unfinished, "outdated: kept from earlier"),
    Damage("lens-folder-deleted", _remove("recency"), "recency: done, 0 new model calls"),
    Damage("lens-run-json-damaged", _write("outdated/run.json", "{not json"), "outdated: done, 0 new model calls"),
    Damage("lens-run-json-deleted", _remove("outdated/run.json"), "outdated: done, 0 new model calls"),
    Damage("check-md-deleted", _remove("check.md"), "outdated: kept from earlier"),
    Damage("card-deleted", _remove("card.html"), "recency: kept from earlier"),
    Damage("card-truncated", _write("card.html", "<html><bo"), "recency: kept from earlier"),
    Damage("stale-temporary-files", _write(".check.md.k1ll3d00.tmp", "half"), "outdated: kept from earlier"),
]


@pytest.mark.parametrize("case", [pytest.param(d, id=d.name) for d in DAMAGE])
def test_a_damaged_check_folder_reruns_to_the_same_folder_without_a_new_call(
    case: Damage, finished: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out, cache = tmp_path / "check", tmp_path / "c.sqlite"
    shutil.copytree(finished / "check", out)
    for part in finished.glob("c.sqlite*"):  # with its write-ahead log, should one be left
        shutil.copy2(part, tmp_path / part.name)
    calls = cached_rows(cache)
    reference = contents(out)
    case.damage(out)
    ran = run_main(monkeypatch, capsys, *ARGS, "--out", str(out), "--cache", str(cache), columns=400)
    assert ran.code == 0, ran.text
    assert case.said in ran.err, ran.err
    assert cached_rows(cache) == calls  # no finished call asked again
    assert not [p.name for p in out.rglob(".*") if p.name.endswith(".tmp") or ".staging-" in p.name]
    assert contents(out) == reference
