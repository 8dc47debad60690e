from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from chronoprobe.datasets.recency_taxonomy import RecencyClass, Stationarity
from chronoprobe.datasets.recencyqa import (
    load_recencyqa,
    parse_items,
    stratified_sample,
    stratum,
    write_recencyqa,
)
from chronoprobe.datasets.sources import packaged_dir
from chronoprobe.errors import DataError

ASSETS = Path(__file__).resolve().parents[1] / "assets"
SHIPPED = packaged_dir("recencyqa") / "RecencyQA.json.gz"


@pytest.mark.e2e
def test_loader_reads_the_full_dataset() -> None:
    items = load_recencyqa(SHIPPED)
    assert len(items) == 4031
    counts = Counter(item.final_stationary_label for item in items)
    assert counts == {Stationarity.STATIONARY: 2910, Stationarity.NON_STATIONARY: 1121}
    assert sum(len(item.unique_labels) for item in items) == 5237  # "Total Recency Labels" in Table 3
    first = next(item for item in items if item.q_id == 3438)
    assert first.majority_label is RecencyClass.A_YEAR
    assert [c.recency_label for c in first.label_contexts] == [RecencyClass.A_FEW_YEARS, RecencyClass.A_YEAR]
    assert all(item.stationary == (len(item.label_contexts) == 1) for item in items)


def test_round_trip_keeps_the_json_layout(tmp_path: Path) -> None:
    items = load_recencyqa(ASSETS / "recency_sample.json")
    out = tmp_path / "copy.json"
    write_recencyqa(out, items)
    assert json.loads(out.read_text()) == json.loads((ASSETS / "recency_sample.json").read_text())
    assert load_recencyqa(out) == items


def test_extra_fields_survive_a_round_trip(tmp_path: Path) -> None:
    rows = json.loads((ASSETS / "recency_sample.json").read_text())[:2]
    rows[0]["label_samples"] = ["A-Day"] * 13
    items = parse_items(rows, "test")
    assert items[0].extra == {"label_samples": ["A-Day"] * 13}
    write_recencyqa(tmp_path / "x.json", items)
    assert json.loads((tmp_path / "x.json").read_text())[0]["label_samples"] == ["A-Day"] * 13


def test_bad_rows_name_the_file_row_and_field(tmp_path: Path) -> None:
    rows = json.loads((ASSETS / "recency_sample.json").read_text())[:3]
    rows[2]["majority_label"] = "A-Decade"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(rows))
    with pytest.raises(DataError, match=r"bad.json row 2 .*majority_label"):
        load_recencyqa(bad)
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    with pytest.raises(DataError, match=r"broken\.json line 1"):
        load_recencyqa(broken)
    with pytest.raises(DataError, match="no such file"):
        load_recencyqa(tmp_path / "missing.json")


def test_hub_source_fails_with_one_line_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DataError) as info:
        load_recencyqa("hf:nobody/no-such-recencyqa")
    assert "\n" not in str(info.value) and "hf:nobody/no-such-recencyqa" in str(info.value)


@pytest.mark.e2e
def test_stratified_sample_is_seeded_and_keeps_the_mix() -> None:
    items = load_recencyqa(SHIPPED)
    a = stratified_sample(items, 200, seed=0)
    assert a == stratified_sample(items, 200, seed=0)
    assert a != stratified_sample(items, 200, seed=1)
    assert len(a) == 200 and len({i.q_id for i in a}) == 200
    full = Counter(stratum(i) for i in items)
    got = Counter(stratum(i) for i in a)
    for key, count in full.items():
        assert abs(got[key] - 200 * count / len(items)) < 1  # largest-remainder quotas
    # 2910 / 4031 of 200 = 144.4 stationary
    assert sum(i.stationary for i in a) in (144, 145)


def _row(q_id: int, label: str, stationary: bool) -> dict:
    return {
        "q_id": q_id,
        "question": f"q{q_id}?",
        "unique_labels": [label],
        "label_distribution": {label: 1.0},
        "majority_label": label,
        "confidence": 1.0,
        "entropy": 0.0,
        "label_contexts": [{"recency_label": label, "context": "c"}],
        "final_stationary_label": "Stationary" if stationary else "Non-Stationary",
    }


def test_stratified_sample_by_hand() -> None:
    # strata: (S, A-Day) x6, (NS, A-Day) x3, (S, Never) x1; n=5 -> quotas 3, 1.5, 0.5
    # floors 3, 1, 0; one slot left, remainders tie at .5 -> the larger stratum (NS, A-Day) gets it
    rows = [_row(i, "A-Day", True) for i in range(6)] + [_row(10 + i, "A-Day", False) for i in range(3)]
    rows.append(_row(20, "Never", True))
    items = parse_items(rows, "test")
    sample = stratified_sample(items, 5, seed=3)
    counts = Counter(stratum(i) for i in sample)
    assert counts == {("Stationary", "A-Day"): 3, ("Non-Stationary", "A-Day"): 2}
    assert [i.q_id for i in sample] == sorted(i.q_id for i in sample)  # input order kept
    assert stratified_sample(items, None) == items
    assert stratified_sample(items, 100) == items
    assert stratified_sample(items, 0) == []
