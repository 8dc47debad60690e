"""The Lens hooks a generated command runs through: notices before the work, the console summary after,
refusals of the engine before any model loads, and helper models loaded with the run's backend options."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

import chronoprobe as cp
from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.contract.lens import LENSES, ModelLoader, headline_lines
from chronoprobe.contract.lens_run import lens_tool
from chronoprobe.contract.runner import produce
from chronoprobe.contract.tool import RunSettings
from chronoprobe.engines import Engine, ModelSource
from chronoprobe.errors import ConfigError
from chronoprobe.models.base import Backend, DecodingParams, Generation, Prompt
from chronoprobe.models.registry import BackendOptions
from chronoprobe.records.runlog import Metric, Summary
from chronoprobe.testing import register_mock, unregister_mock
from toy_parts import FullToyLens

EDIT_SET = (
    Path(__file__).resolve().parent
    / "assets"
    / "editing_results"
    / "models_editing"
    / "editing_datasets"
    / "llama2-7b-chat"
    / "editing_dataset.json"
)


class NotingLens(FullToyLens):  # type: ignore[misc]  # tests/toy_parts.py is imported by file name, untyped here
    """The toy lens with a note from load, and a helper model loaded in setup."""

    seen: ClassVar[list[Any]] = []

    def load(self) -> None:
        super().load()
        self.notes.append("two of the questions are about years")

    def setup(self, cache: CallCache, load_model: ModelLoader) -> None:
        helper = load_model("mock:constant=helping")
        type(self).seen = [load_model.options, helper.info.spec]


@pytest.fixture
def noting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    monkeypatch.setitem(LENSES, "noting", f"{__name__}:NotingLens")
    register_mock("years", lambda prompt, params: "It was in 2019.")
    yield
    unregister_mock("years")


def test_the_notices_come_before_the_plan_and_the_helper_gets_the_runs_options(noting: None, tmp_path: Path) -> None:
    told: list[str] = []
    made = lens_tool(NotingLens).from_options(models=["mock:years"], limit=2, out=tmp_path / "run")
    lens = made.lens
    run = produce(
        made,
        RunSettings(
            options=BackendOptions(dtype="float32", batch_size=3), cache=tmp_path / "c.sqlite", notice=told.append
        ),
    )
    note, plan = told  # the notice first; the plan line (the default, from the workload) before the first call
    assert note == "note: two of the questions are about years"
    assert plan.startswith("toy: 2 questions, 2 model calls; about ")
    options, spec = NotingLens.seen
    assert (options.dtype, options.batch_size, spec) == ("float32", 3, "mock:constant=helping")
    assert lens.present(run) == ["mock:years: year_pct 100.0% [34.2, 100.0] (n=2)"]  # Wilson, 2 of 2


def test_present_shows_the_headline_records_else_the_headline_numbers() -> None:
    metrics = [
        Metric(model="m", group="all", name="cp", value=2.5, n=6, ci_low=2.0, ci_high=3.0, headline=True),
        Metric(model="m", group="static", name="cp", value=1.0, n=2, headline=True),
        Metric(model="m", group="all", name="se", value=9.0),  # not a headline number: not shown
    ]
    with_records = Summary(lens="x", models=["m"], headline={"m": {"cp": 2.5}}, metrics=metrics)
    assert headline_lines(with_records) == ["m: cp 2.50 [2.00, 3.00] (n=6)  static: cp 1.00 (n=2)"]
    bare = Summary(lens="x", models=["m"], headline={"m": {"right": 0.5, "wrong": None}})
    assert headline_lines(bare) == ["m: right 0.5  wrong –"]


class _Elsewhere(Engine):
    """A stand-in for an engine that runs the batches in other processes (as Ray does): never started here."""

    label = "ray:stand-in"
    local = False

    def start(self) -> None:
        raise AssertionError("the engine started: the refusal came too late")

    def run(
        self, backend: Backend, source: ModelSource | None, batches: Sequence[Sequence[Prompt]], params: DecodingParams
    ) -> Iterator[tuple[int, list[Generation]]]:
        raise AssertionError("no batch may run")


def test_weight_edits_on_another_engine_are_refused_from_python_before_any_model_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_models(*args: Any, **kwargs: Any) -> list[CachedModel]:
        raise AssertionError("a model loaded")

    cp.run  # noqa: B018  # imports chronoprobe.api now: imported under the patch, it would keep no_models for good
    monkeypatch.setattr("chronoprobe.contract.runner.load_models", no_models)
    out = tmp_path / "edits"
    with pytest.raises(ConfigError, match=r"^--engine ray:stand-in: rome edit the weights in this process"):
        cp.run("editing", models="mock:echo", dataset=EDIT_SET, method="rome", engine=_Elsewhere(), out=out)
    assert not out.exists()
