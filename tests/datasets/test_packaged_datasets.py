"""DynamicQA and RecencyQA ship inside the package: the authors' bytes, the same items, found first."""

from __future__ import annotations

import gzip
import importlib.util
import shutil
from collections import Counter
from pathlib import Path

import pytest

from chronoprobe.datasets import dynamicqa as dq
from chronoprobe.datasets import mulan as ml
from chronoprobe.datasets import recencyqa as rq
from chronoprobe.datasets.sources import SHARED_DATA_ENV, packaged_dir
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.io import read_text

ASSETS = Path(__file__).resolve().parents[1] / "assets"
BUILD_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "build_packaged_datasets.py"


def test_shipped_dynamicqa_has_every_row() -> None:
    facts = dq.load_dynamicqa(packaged_dir("dynamicqa"))
    assert Counter(f.fact_class for f in facts) == {"static": 2500, "temporal": 2495, "disputed": 694}
    assert all("[ENTITY]" not in item.context for f in facts[:200] for item in dq.expand(f))


def test_shipped_recencyqa_has_every_question() -> None:
    items = rq.load_recencyqa(packaged_dir("recencyqa") / "RecencyQA.json.gz")
    assert len(items) == 4031
    assert sum(len(item.unique_labels) for item in items) == 5237  # "Total Recency Labels" in Table 3


def test_licence_and_source_notes_ship_beside_the_data() -> None:
    for dataset in ("dynamicqa", "recencyqa"):
        folder = packaged_dir(dataset)
        assert "MIT License" in (folder / "LICENSE").read_text(encoding="utf-8")
        assert "commit" in (folder / "SOURCE.md").read_text(encoding="utf-8")


@pytest.mark.e2e
def test_shipped_files_are_the_authors_bytes_and_the_script_rebuilds_them(shared_data: Path) -> None:
    spec = importlib.util.spec_from_file_location("build_packaged_datasets", BUILD_SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for dataset, names in script.FILES.items():
        for name in names:
            original = (shared_data / dataset / name).read_bytes()
            shipped = (packaged_dir(dataset) / f"{name}.gz").read_bytes()
            assert gzip.decompress(shipped) == original
            assert script.compressed(original) == shipped  # deterministic: rerunning the script changes nothing


@pytest.mark.e2e
def test_shipped_data_gives_the_same_items_as_the_shared_copy(shared_data: Path) -> None:
    shipped = dq.load_dynamicqa(packaged_dir("dynamicqa"))
    shared = dq.load_dynamicqa(shared_data / "dynamicqa")
    assert [f.model_copy(update={"source": ""}) for f in shipped] == [
        f.model_copy(update={"source": ""}) for f in shared
    ]  # the source names the file the row came from, so it differs
    assert [i for f in shipped for i in dq.expand(f)] == [i for f in shared for i in dq.expand(f)]
    assert rq.load_recencyqa(rq.default_source()) == rq.load_recencyqa(shared_data / "recencyqa" / "RecencyQA.json")


def test_without_data_the_env_folder_comes_before_the_shipped_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SHARED_DATA_ENV, raising=False)
    assert dq.default_source() == packaged_dir("dynamicqa")
    assert rq.default_source() == packaged_dir("recencyqa") / "RecencyQA.json.gz"
    monkeypatch.setenv(SHARED_DATA_ENV, str(tmp_path / "nowhere"))  # a folder that does not exist is refused
    with pytest.raises(ConfigError, match="no such folder"):
        dq.default_source()
    (tmp_path / "nowhere").mkdir()  # set but empty: the shipped copy serves
    assert dq.default_source() == packaged_dir("dynamicqa")
    shutil.copytree(ASSETS / "dynamicqa_small", tmp_path / "nowhere" / "dynamicqa")
    (tmp_path / "nowhere" / "recencyqa").mkdir()
    shutil.copy(ASSETS / "recency_sample.json", tmp_path / "nowhere" / "recencyqa" / "RecencyQA.json")
    assert dq.default_source() == tmp_path / "nowhere" / "dynamicqa"
    assert len(rq.load_recencyqa(rq.default_source())) == 14


def test_provenance_names_the_shipped_copy_by_its_origin(tmp_path: Path) -> None:
    assert dq.describe_source(packaged_dir("dynamicqa")) == (
        "chronoprobe/data/dynamicqa (shipped copy of github.com/copenlu/dynamicqa@4c6d2cb, MIT)"
    )
    assert "DataScienceUIBK/RecencyQA@2d460b5" in rq.describe_source(rq.default_source())
    assert dq.describe_source(tmp_path) == str(tmp_path)
    assert rq.describe_source("hf:someone/recency") == "hf:someone/recency"


def test_a_gzipped_copy_loads_and_a_damaged_one_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "dq"
    folder.mkdir()
    for name in ("Static_final.csv", "Temporal_final.csv", "Disputable_final.csv"):
        (folder / f"{name}.gz").write_bytes(gzip.compress((ASSETS / "dynamicqa_small" / name).read_bytes()))
    assert [i for f in dq.load_dynamicqa(folder) for i in dq.expand(f)] == [
        i for f in dq.load_dynamicqa(ASSETS / "dynamicqa_small") for i in dq.expand(f)
    ]
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(gzip.compress(b"[1, 2, 3]")[:-6])
    with pytest.raises(DataError, match=r"broken\.json\.gz: is not a readable gzip file"):
        read_text(broken)


def test_a_missing_folder_or_an_unreachable_hub_names_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DataError, match="--data"):
        dq.load_dynamicqa(tmp_path / "nowhere")
    with pytest.raises(DataError, match="--data"):
        rq.load_recencyqa(tmp_path / "nowhere.json")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # fails at once instead of retrying for half a minute
    with pytest.raises(ConfigError, match="--data") as caught:
        dq.load_dynamicqa(dq.HUB_ID)
    assert "\n" not in str(caught.value)
    with pytest.raises(DataError, match="--data"):
        rq.load_recencyqa("hf:someone/recencyqa")


@pytest.mark.e2e
def test_mulan_is_not_shipped_and_its_error_says_how_to_supply_it(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not packaged_dir("mulan").exists()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(ConfigError) as caught:
        ml.load_queries(ml.QUERIES_HUB_ID)
    message = str(caught.value)
    assert "--data" in message and ml.QUERIES_HUB_ID in message and "no licence" in message
    assert "\n" not in message
