"""How far to trust the recency gate: its model measured on a held-out RecencyQA split, kept, and said on every call."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from chronoprobe.cache import CachedModel, open_cache, stable_hash
from chronoprobe.datasets.recency_taxonomy import RecencyClass
from chronoprobe.datasets.recencyqa import default_source, load_recencyqa
from chronoprobe.lenses.recency import gate_check as gc
from chronoprobe.lenses.recency.gate import GateSettings, recency_gate
from chronoprobe.metrics.recency import gate_estimates
from chronoprobe.models.registry import load_backend
from chronoprobe.testing import register_mock, unregister_mock
from cli_driver import run_main


@pytest.fixture(scope="module")
def pool() -> list[object]:
    return list(load_recencyqa(default_source()))


def test_gate_estimates_by_hand() -> None:
    # 4 questions need retrieval (gold True), 2 do not; the gate retrieves for 3 of the 4 and for 1 of the 2
    gold = [True, True, True, True, False, False]
    decided = [True, True, True, False, True, False]
    est = gate_estimates(gold, decided)
    assert est["agreement"].value == pytest.approx(4 / 6) and est["agreement"].n == 6
    assert est["retrieve_when_changing"].value == pytest.approx(3 / 4)
    assert est["keep_when_stable"].value == pytest.approx(1 / 2)
    assert est["balanced_accuracy"].value == pytest.approx((3 / 4 + 1 / 2) / 2)
    constant = gate_estimates(gold, [True] * 6)["balanced_accuracy"]
    assert constant.value == 0.5 and constant.ci_low == constant.ci_high == 0.5  # always retrieving is a coin


@pytest.mark.e2e
def test_the_split_is_a_tenth_fixed_by_hash_and_holds_no_demonstration(pool: list[object]) -> None:
    held = gc.heldout_split(pool)
    assert 0.09 * len(pool) < len(held) < 0.11 * len(pool)
    assert [q.q_id for q in gc.heldout_split(list(reversed(pool)))] == [q.q_id for q in held]  # order-free
    assert not {str(q.q_id) for q in held} & gc.demonstration_ids(pool)
    assert gc.demonstration_ids(pool)  # there are demonstrations to keep out


@pytest.mark.e2e
def test_the_shipped_measurements_are_current(pool: list[object]) -> None:
    """If the gate's prompt, the split or the key changes, the shipped measurements must be made again."""
    digest = gc.split_digest(gc.heldout_split(pool))
    shipped = sorted(gc.shipped_dir().glob("*.json"))
    assert [p.stem for p in shipped] == ["gemma3-270m", "smollm2"]
    for path in shipped:
        check = gc.read_check(path)
        assert check.prompt_sha256 == gc._prompt_sha256() and check.split == gc.SPLIT
        assert check.split_sha256 == digest and len(check.items) == len(gc.heldout_split(pool))
        assert check.settings == GateSettings()  # the gate's defaults
        identity = {k: v for k, v in check.model.items() if k != "sampler"}
        assert (
            check.key
            == stable_hash(
                {
                    "gate_check": gc.FORMAT,
                    "model": check.model,
                    "settings": check.settings.model_dump(mode="json"),
                    "prompt": check.prompt_sha256,
                    "split": gc.SPLIT,
                }
            )
            and identity["backend"] == "hf"
        )
        measured = gc.quality(gc.Found(check=check, path=path, exact=True), RecencyClass.A_YEAR)
        assert measured.n == len(check.items) and not measured.useful  # the tiny embedded models cannot route


def _always_a_day(prompt: object, params: object) -> str:
    return "A-Day"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    register_mock("a-day", _always_a_day)
    yield tmp_path
    unregister_mock("a-day")


@pytest.mark.e2e
def test_measure_keep_and_read_back(home: Path, pool: list[object], caplog: pytest.LogCaptureFixture) -> None:
    model = CachedModel(load_backend("mock:a-day"), open_cache(home / "c.sqlite"))
    settings = GateSettings()
    assert gc.find(model.info, settings) is None
    check = gc.measure(model, pool, settings, dataset="shipped", limit=40)
    path = gc.save(check)
    assert path.parent == home / "home" / "gate_checks"
    found = gc.find(model.info, settings)
    assert found is not None and found.exact and found.check.key == check.key
    # always A-Day: retrieves for everything at A-Year, so it agrees exactly on the questions that change within a year
    measured = gc.quality(found, RecencyClass.A_YEAR)
    changing = sum(RecencyClass.parse(i.gold) <= RecencyClass.A_YEAR for i in check.items)
    assert measured.agreement.value == pytest.approx(changing / 40) and measured.balanced_accuracy.value == 0.5
    assert measured.unparseable.value == 0.0 and not measured.useful
    other = gc.find(model.info, GateSettings(samples=1))
    assert other is not None and not other.exact  # another setting: this model's measurement, said as such
    with caplog.at_level(logging.WARNING, logger="chronoprobe.lenses.recency.gate"):
        recency_gate("Who is the CEO of Amazon?", model)
        recency_gate("Who is the CEO of Apple?", model)  # warned once per model and setting
    warned = [r.getMessage() for r in caplog.records if r.name == "chronoprobe.lenses.recency.gate"]
    assert len(warned) == 1 and "too weak to route with" in warned[0] and "on 40 held-out RecencyQA" in warned[0]


@pytest.mark.e2e
def test_the_cli_measures_then_the_gate_says_how_good_it_is(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = str(home / "c.sqlite")
    ran = run_main(
        monkeypatch, capsys, "recency", "gate", "Who is the CEO of Amazon?", "-m", "mock:a-day", "--cache", cache
    )
    assert ran.code == 0 and "was never measured" in " ".join(ran.err.split())
    ran = run_main(monkeypatch, capsys, "recency", "gate-check", "-m", "mock:a-day", "--limit", "30", "--cache", cache)
    assert ran.code == 0, ran.text
    assert "gate quality of mock:a-day on 30 held-out RecencyQA questions" in ran.out
    assert "is too weak to route with" in ran.out
    ran = run_main(
        monkeypatch, capsys, "recency", "gate", "Who is the CEO of Amazon?", "-m", "mock:a-day", "--cache", cache
    )
    assert ran.code == 0
    assert ran.out.splitlines()[0].startswith("RETRIEVE")
    assert "gate quality of mock:a-day on 30 held-out RecencyQA questions" in ran.out  # under the decision
    assert "warning: mock:a-day is too weak to route with" in " ".join(ran.err.split())
    ran = run_main(
        monkeypatch,
        capsys,
        "recency",
        "gate",
        "Who is the CEO of Amazon?",
        "-m",
        "mock:a-day",
        "--json",
        "--cache",
        cache,
    )
    record = json.loads(ran.out)
    assert record["retrieve"] is True and record["gate_quality"]["n"] == 30
    assert record["gate_quality"]["balanced_accuracy"]["value"] == 0.5
