"""A sweep of careless calls to the Python API: each raises one documented chronoprobe error (docs/api.md,
"Errors") naming the place, never a bare KeyError, AttributeError or TypeError from inside, and writes nothing.

The Python twin of ``tests/cli/test_bad_inputs.py``: every case runs the real ``cp.run``, ``cp.produce``,
``cp.check`` or ``cp.load`` with model loading refused, so a case that gets as far as loading a model fails.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import chronoprobe as cp
from chronoprobe.errors import ChronoprobeError, ConfigError, DataError

SPEC = "mock:constant=Paris"
ASSETS = Path(__file__).resolve().parent / "assets"


@dataclass(frozen=True)
class Case:
    name: str
    call: Callable[[Path], object]
    error: type[ChronoprobeError]
    where: str
    """A part of the error's ``where``: the keyword, option or path it names."""


def _run(**options: Any) -> Callable[[Path], object]:
    return lambda tmp: cp.run("outdated", **{"out": tmp / "run", "progress": False, **options})


def _check(**options: Any) -> Callable[[Path], object]:
    return lambda tmp: cp.check(SPEC, **{"out": tmp / "check", "progress": False, **options})


CASES = [
    # cp.run: names, types, values, paths
    Case("run-lens-not-text", lambda tmp: cp.run(5), ConfigError, "lens"),  # type: ignore[arg-type]
    Case("run-lens-unknown", lambda tmp: cp.run("fixing", progress=False), ConfigError, "lens"),
    Case("run-models-number", _run(models=5), ConfigError, "models"),
    Case("run-models-in-a-dict", _run(models={"a": SPEC}), ConfigError, "models"),
    Case("run-models-bad-spec", _run(models="nonsense:x"), ConfigError, "nonsense:x"),
    Case("run-models-bad-name", _run(models="a b=mock:echo"), ConfigError, "--model"),
    Case("run-option-unknown", _run(models=SPEC, bogus=1), ConfigError, "bogus"),
    Case("run-option-wrong-type", _run(models=SPEC, limit="many"), ConfigError, "--limit"),
    Case("run-option-out-of-range", _run(models=SPEC, limit=0), ConfigError, "--limit"),
    Case("run-option-a-list-for-a-number", _run(models=SPEC, limit=[1, 2]), ConfigError, "--limit"),
    Case("run-bool-as-text", _run(models=SPEC, live="sometimes"), ConfigError, "--live"),
    Case("run-date-in-the-future", _run(models=SPEC, as_of="2999-01-01"), ConfigError, "--as-of"),
    Case("run-path-not-a-path", _run(models=SPEC, instruction_file=3), ConfigError, "--instruction-file"),
    Case("run-snapshot-not-text", _run(models=SPEC, snapshot=5), ConfigError, "--snapshot"),
    Case("run-argument-missing", lambda tmp: cp.run("conflicts", SPEC, progress=False), ConfigError, "DATASET"),
    Case(
        "run-choice-unknown",
        lambda tmp: cp.run("recency", SPEC, strategy=[5], progress=False),
        ConfigError,
        "--strategy",
    ),
    Case("run-models-mixed-types", _run(models=[SPEC, 5]), ConfigError, "models"),
    Case("run-out-not-a-path", _run(models=SPEC, out=5), ConfigError, "out"),
    Case("run-cache-not-a-path", _run(models=SPEC, cache=2.5), ConfigError, "cache"),
    Case("run-progress-not-a-factory", _run(models=SPEC, progress="yes"), ConfigError, "progress"),
    Case("run-engine-not-text", _run(models=SPEC, engine=7), ConfigError, "engine"),
    Case("run-engine-unknown", _run(models=SPEC, engine="spark"), ConfigError, "--engine"),
    Case("run-backend-option-bad", _run(models=SPEC, dtype="float8"), ConfigError, "dtype"),
    Case(
        "run-facts-missing",
        lambda tmp: cp.run("outdated", SPEC, facts=tmp / "no.json", progress=False),
        DataError,
        "no.json",
    ),
    Case(
        "run-out-a-file",
        lambda tmp: cp.run("outdated", SPEC, out=tmp / "file.txt", progress=False),
        ConfigError,
        "--out",
    ),
    Case("run-editing-without-facts", lambda tmp: cp.run("editing", SPEC, progress=False), ConfigError, "--from"),
    Case("run-old-and-new-keyword", _run(models=SPEC, facts_file="a.json", facts="b.json"), ConfigError, "facts"),
    Case("run-old-and-new-models", _run(model=SPEC, models="mock:echo"), ConfigError, "models"),
    # cp.route: refused before the embedding model loads
    Case("route-no-questions", lambda tmp: cp.route([]), ConfigError, "questions"),
    Case("route-empty-question", lambda tmp: cp.route(["Who?", " "]), ConfigError, "question 2"),
    Case("route-threshold-unknown", lambda tmp: cp.route("Who?", threshold="often"), ConfigError, "--threshold"),
    Case("route-cut-off-above-one", lambda tmp: cp.route("Who?", min_share=1.5), ConfigError, "--min-share"),
    Case("route-weights-missing", lambda tmp: cp.route("Who?", weights=tmp / "none"), ConfigError, "none"),
    Case("route-weights-not-a-router", lambda tmp: cp.route("Who?", weights=tmp / "empty"), ConfigError, "empty"),
    Case("run-keyword-no-release-had", _run(models=SPEC, cutoffs={"a": "2024-01"}), ConfigError, "cutoffs"),
    # cp.produce
    Case("produce-tool-not-text", lambda tmp: cp.produce(["results"]), ConfigError, "tool"),  # type: ignore[arg-type]
    Case("produce-tool-unknown", lambda tmp: cp.produce("recency.labels"), ConfigError, "tool"),
    Case("produce-lens-run-unknown", lambda tmp: cp.produce("fixing.run"), ConfigError, "tool"),
    Case("produce-missing-argument", lambda tmp: cp.produce("results", progress=False), ConfigError, "DIR"),
    Case("produce-dirs-number", lambda tmp: cp.produce("results", dirs=5, progress=False), ConfigError, "DIR"),
    Case(
        "produce-dirs-missing",
        lambda tmp: cp.produce("results", dirs=[tmp / "none"], progress=False),
        DataError,
        "none",
    ),
    Case(
        "produce-format-unknown", lambda tmp: cp.produce("results", dirs=[tmp], format="xml"), ConfigError, "--format"
    ),
    Case("produce-card-out-not-a-path", lambda tmp: cp.produce("card", dirs=[tmp], out=5), ConfigError, "--out"),
    Case("produce-handles-to-a-tool", lambda tmp: cp.produce("results", dirs=[tmp], models=5), ConfigError, "models"),
    Case("produce-option-unknown", lambda tmp: cp.produce("snapshot.show", frame="x"), ConfigError, "frame"),
    Case("produce-cache-prune-nothing", lambda tmp: cp.produce("cache.prune"), ConfigError, "cache prune"),
    Case(
        "produce-cache-prune-age-word",
        lambda tmp: cp.produce("cache.prune", older_than="week"),
        ConfigError,
        "--older-than",
    ),
    Case(
        "produce-cache-prune-missing-cache",
        lambda tmp: cp.produce("cache.prune", model_id="m", cache=tmp / "none.sqlite"),
        ConfigError,
        "none.sqlite",
    ),
    Case("produce-cache-info-folder", lambda tmp: cp.produce("cache.info", cache=tmp), ConfigError, "call cache"),
    Case(
        "produce-keyword-no-release-had", lambda tmp: cp.produce("results", dirs=[tmp], fmt="csv"), ConfigError, "fmt"
    ),
    # cp.check
    Case("check-models-number", lambda tmp: cp.check(5, progress=False), ConfigError, "models"),  # type: ignore[arg-type]
    Case("check-budget-unknown", _check(budget="huge"), ConfigError, "--budget"),
    Case("check-lens-unknown", _check(lens=["nope"]), ConfigError, "--lens"),
    Case("check-threshold-bad", _check(lens="outdated", require=["outdated.nothing >= x"]), ConfigError, "--require"),
    Case("check-out-not-a-path", _check(out=3), ConfigError, "--out"),
    Case(
        "check-junit-a-folder",
        lambda tmp: cp.check(SPEC, out=tmp / "c", junit=tmp, progress=False),
        ConfigError,
        "--junit",
    ),
    Case("check-live-and-snapshot", _check(live=True, snapshot="dyknow-2023-12-18"), ConfigError, "--live"),
    Case("check-keyword-no-release-had", _check(lenses=["outdated"]), ConfigError, "lenses"),
    Case("check-model-keyword-no-release-had", lambda tmp: cp.check(model=SPEC, progress=False), ConfigError, "model"),
    Case("check-option-unknown", _check(thresholds=["x"]), ConfigError, "thresholds"),
    # cp.load
    Case("load-not-a-path", lambda tmp: cp.load(5), ConfigError, "path"),  # type: ignore[arg-type]
    Case("load-none", lambda tmp: cp.load(None), ConfigError, "path"),  # type: ignore[arg-type]
    Case("load-missing", lambda tmp: cp.load(tmp / "none"), DataError, "none"),
    Case("load-a-file", lambda tmp: cp.load(tmp / "file.txt"), DataError, "file.txt"),
    Case("load-an-empty-folder", lambda tmp: cp.load(tmp / "empty"), DataError, "empty"),
    # cp.compare (issue 44 §3): a ConfigError, as cp.load gives, never os.fspath's TypeError
    Case("compare-a-number", lambda tmp: cp.compare(tmp / "empty", 42), ConfigError, "folders"),  # type: ignore[arg-type]
    Case("compare-none", lambda tmp: cp.compare(tmp / "empty", None), ConfigError, "folders"),  # type: ignore[arg-type]
    Case("compare-a-list", lambda tmp: cp.compare(["A", "B"]), ConfigError, "folders"),  # type: ignore[arg-type]
    Case("compare-missing", lambda tmp: cp.compare(tmp / "none", tmp / "empty"), DataError, "none"),
]


def _paths(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if "home" not in p.relative_to(root).parts}


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_careless_call_is_one_documented_error_and_writes_nothing(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)

    def no_model(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a model loaded before the mistake was named")

    monkeypatch.setattr("chronoprobe.contract.runner.load_backend", no_model)
    monkeypatch.setattr("chronoprobe.judges.embedding.Embedder.__init__", no_model)
    (tmp_path / "file.txt").write_text("not a run\n")
    (tmp_path / "empty").mkdir()
    before = _paths(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the keywords 0.1.0 released, taken until 0.4.0
        with pytest.raises(ChronoprobeError) as raised:
            case.call(tmp_path)
    assert isinstance(raised.value, case.error), repr(raised.value)
    assert case.where in raised.value.where, str(raised.value)
    assert "\n" not in str(raised.value)
    assert _paths(tmp_path) == before  # nothing written, nothing of the user's touched


@pytest.mark.e2e
def test_an_older_keyword_still_works_and_names_the_new_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    with pytest.warns(
        DeprecationWarning, match=r"'use_aliases' is deprecated and removed in 0\.4\.0; use 'aliases'"
    ) as told:
        run = cp.run("outdated", SPEC, limit=1, use_aliases=True, out=tmp_path / "run", cache=tmp_path / "c.sqlite")
    assert told[0].filename == __file__  # the warning points at the caller's line
    assert run.config is not None and run.config.aliases is True  # type: ignore[attr-defined]
    with pytest.warns(DeprecationWarning, match=r"'model' is deprecated and removed in 0\.4\.0; use 'models'"):
        again = cp.run("outdated", model=SPEC, limit=1, out=tmp_path / "run", cache=tmp_path / "c.sqlite")
    assert again.summary == run.summary
