"""DynamicQA and MuLan loaders, on our fixtures and (when present) the shared data."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from chronoprobe.datasets import dynamicqa as dq
from chronoprobe.datasets import mulan as ml
from chronoprobe.datasets.sources import packaged_dir
from chronoprobe.errors import DataError

ASSETS = Path(__file__).resolve().parents[1] / "assets"
DQ_SMALL = ASSETS / "dynamicqa_small"


def test_dynamicqa_rows_expand_into_true_and_counterfactual_items():
    facts = dq.load_dynamicqa(DQ_SMALL)
    assert [f.fact_class for f in facts] == ["static", "static", "temporal", "temporal", "disputed"]
    france = facts[0]
    true_item, cf_item = dq.expand(france)
    assert true_item.context == "France is a country in Western Europe whose capital is Paris."
    assert cf_item.context == "France is a country in Western Europe whose capital is Lyon."
    assert (true_item.inserted, cf_item.inserted) == ("Paris", "Lyon")
    assert cf_item.counterfactual and not true_item.counterfactual
    assert france.possible_answers == ("Paris", "City of Light")
    # Disputable: the answer itself is in the context and gets replaced.
    pluto_true, pluto_cf = dq.expand(facts[-1])
    assert "dwarf planet" in pluto_true.context
    assert pluto_cf.context.startswith("pluto is a moon in the kuiper belt")


def test_take_balanced_spreads_over_classes():
    facts = dq.load_dynamicqa(DQ_SMALL)
    assert [f.fact_class for f in dq.take_balanced(facts, 3)] == ["static", "temporal", "disputed"]
    assert len(dq.take_balanced(facts, None)) == 5


def _copy_with(tmp_path: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    folder = tmp_path / "dq"
    shutil.copytree(DQ_SMALL, folder)
    path = folder / "Temporal_final.csv"
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    edit(rows)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return folder


def test_malformed_dynamicqa_rows_name_file_and_row(tmp_path: Path):
    folder = _copy_with(tmp_path, lambda rows: rows[1].update(replace_name=""))
    with pytest.raises(DataError, match=r"Temporal_final\.csv row 2: missing or empty column\(s\): replace_name"):
        dq.load_dynamicqa(folder)
    folder = _copy_with(tmp_path / "b", lambda rows: rows[0].update(context="no placeholder here"))
    with pytest.raises(DataError, match=r"row 1: context has no \[ENTITY\]"):
        dq.load_dynamicqa(folder)
    folder = _copy_with(tmp_path / "c", lambda rows: rows[0].update(possible_answers="[oops"))
    with pytest.raises(DataError, match=r"row 1: possible_answers"):
        dq.load_dynamicqa(folder)
    with pytest.raises(DataError, match="not a folder"):
        dq.load_dynamicqa(tmp_path / "nowhere")


def test_shipped_dynamicqa_counts():
    facts = dq.load_dynamicqa(packaged_dir("dynamicqa"))
    counts = {c: sum(f.fact_class == c for f in facts) for c in ("static", "temporal", "disputed")}
    assert counts == {"static": 2500, "temporal": 2495, "disputed": 694}
    assert all("[ENTITY]" not in item.context for f in facts[:200] for item in dq.expand(f))


def test_mulan_fixture_queries_classes_and_subjects(shared_data: Path):
    queries = ml.load_queries(ASSETS / "mulan_queries.jsonl")
    assert len(queries) == 90 and len({q.fact_id for q in queries}) == 18
    assert {q.fact_class for q in queries} == set(ml.MULAN_CLASSES)
    templates = ml.load_templates(shared_data / "mulan" / "templates" / "clean.json")
    assert set(ml.RELATION_CLASS) <= set(templates)  # all 35 relations have templates
    first = queries[0]
    assert ml.subject_of(first, templates["P19"]) == "Albert Einstein"
    assert first.prefix == "Albert Einstein was born in the location of"


def test_relation_classes_from_the_notes():
    assert len(ml.IMMUTABLE_1) == 12 and len(ml.IMMUTABLE_N) == 10 and len(ml.MUTABLE) == 13
    assert ml.relation_class("P36") == "immutable-1"
    assert ml.relation_class("P27") == "immutable-N"
    assert ml.relation_class("P6") == "mutable"
    assert ml.relation_class("P31") is None


def test_malformed_mulan_rows(tmp_path: Path):
    path = tmp_path / "q.jsonl"
    good = {"id": "Q1_P19_0", "relation": "P19", "query": "X was born in _X_ .", "answer": [{"name": "Y"}]}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "bad"}) + "\n")
    with pytest.raises(DataError, match=r"q\.jsonl line 2: id 'bad'"):
        ml.load_queries(path)
    path.write_text(json.dumps({**good, "query": "no slot"}) + "\n")
    with pytest.raises(DataError, match="line 1: query has no _X_"):
        ml.load_queries(path)
    path.write_text("{not json\n")
    with pytest.raises(DataError, match="line 1: invalid JSON"):
        ml.load_queries(path)


@pytest.mark.e2e
def test_aliases_from_a_json_map(shared_data: Path):
    aliases = ml.load_aliases(shared_data / "temporal_conflicts" / "aliases_MULAN.json")
    assert len(aliases) == 25179
    assert "City of Light" in aliases["Q90"]
