"""Re-scoring generations in DyKnow's editing layout: a hand-made fixture whose numbers are computed by hand.

tests/assets/editing_results holds one model (Llama-2-7b-chat-hf; its dataset folder is llama2-7b-chat)
with 3 facts (2 Politicians, 1 Team) under ROME, MEMIT and RAG gold, and, as DyKnow's tree has, an
``IKE/single_edits/Llama-2-7b-chat-hf-full-context`` folder (a copy of ROME's countries files) for
which no editing dataset exists. Per fact, the verdicts of
(edit prompt, paraphrase 1, paraphrase 2) by our classifier:

ROME:  Aland (up, outdated, up: the answer repeats the question, only the text after its last
       occurrence counts), Borduria (outdated, irrelevant, irrelevant), Carl Player (up, up, outdated)
MEMIT: Aland (up, up, up), Borduria (up, outdated, irrelevant),
       Carl Player (outdated, irrelevant: a current national team is never up to date, irrelevant)
RAG gold: everything up to date.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe.errors import ChronoprobeError, ConfigError, DataError
from chronoprobe.lenses.editing.score import EditingScoreSummary, dataset_folder_names, find_generations, prediction

ASSETS = Path(__file__).resolve().parents[1] / "assets" / "editing_results"
DATASETS = ASSETS / "models_editing" / "editing_datasets"
MODEL = "Llama-2-7b-chat-hf"


def score_editing(
    generations: Path, dataset: Path, out: Path, *, labels: str = "ours", models: list[str] | None = None
) -> EditingScoreSummary:
    """``chronoprobe editing score`` from Python, the public path: its output claimed, staged and published."""
    scored: EditingScoreSummary = cp.produce(
        "editing.score", generations=generations, dataset=dataset, out=out, labels=labels, only_model=models
    )
    return scored


def values(summary: object, method: str, group: str) -> tuple[float | None, ...]:
    scores = summary.models[MODEL][method].groups[group]  # type: ignore[attr-defined]
    return tuple(getattr(scores, m).value for m in ("efficacy", "paraphrase", "harmonic_mean", "soft_constraint"))


def test_our_labels_give_the_hand_computed_numbers(tmp_path: Path) -> None:
    summary = score_editing(ASSETS, DATASETS, tmp_path / "out")
    assert list(summary.models[MODEL]) == ["ROME", "MEMIT", "RAG Gold"]  # Table 3's column order
    approx = pytest.approx
    # ROME Politicians: E 1/2, P 1/4, HM 2(1/2)(1/4)/(3/4) = 1/3, soft 1/2
    assert values(summary, "ROME", "Politicians") == approx((0.5, 0.25, 1 / 3, 0.5))
    # ROME Teams: E 1, P 1/2, HM 2/3, soft 1
    assert values(summary, "ROME", "Teams") == approx((1.0, 0.5, 2 / 3, 1.0))
    # ROME All: E 2/3, P 2/6, HM 2(2/3)(1/3)/1 = 4/9, soft 2/3
    assert values(summary, "ROME", "All") == approx((2 / 3, 1 / 3, 4 / 9, 2 / 3))
    # MEMIT Politicians: E 1, P 2/4, HM 2/3, soft 1; Teams all 0; All: E 2/3, P 1/3, HM 4/9, soft 2/3
    assert values(summary, "MEMIT", "Politicians") == approx((1.0, 0.5, 2 / 3, 1.0))
    assert values(summary, "MEMIT", "Teams") == approx((0.0, 0.0, 0.0, 0.0))
    assert values(summary, "MEMIT", "All") == approx((2 / 3, 1 / 3, 4 / 9, 2 / 3))
    assert values(summary, "RAG Gold", "All") == approx((1.0, 1.0, 1.0, 1.0))
    assert summary.models[MODEL]["ROME"].groups["All"].paraphrase.n == 6
    positions = summary.models[MODEL]["ROME"].groups["Positions"]
    assert positions.facts == 0 and positions.harmonic_mean.value is None
    written = json.loads((tmp_path / "out" / "scores.json").read_text())
    assert written["models"][MODEL]["ROME"]["groups"]["All"]["harmonic_mean"]["value"] == approx(4 / 9)
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| Politicians | 2 | 33.3% [" in report and "(Table 7)" in report
    assert (tmp_path / "out" / ".chronoprobe-run").is_file()


def test_original_labels_come_from_the_analysis_files(tmp_path: Path) -> None:
    summary = score_editing(ASSETS, DATASETS, tmp_path / "out", labels="original")
    # ROME's analysis labels Borduria's edit prompt correct (fixed by hand): Politicians E 1, P 1/4, HM 0.4
    assert values(summary, "ROME", "Politicians") == pytest.approx((1.0, 0.25, 0.4, 1.0))
    assert values(summary, "ROME", "All") == pytest.approx((1.0, 1 / 3, 0.5, 1.0))
    assert values(summary, "MEMIT", "All") == pytest.approx((2 / 3, 1 / 3, 4 / 9, 2 / 3))
    # RAG gold has no analysis files: left out and listed (the paper's "-")
    assert "RAG Gold" not in summary.models[MODEL]
    assert list(summary.unlabelled) == [str(ASSETS / "RAG" / "results" / MODEL)]


def test_a_missing_analysis_file_is_named(tmp_path: Path) -> None:
    copy = tmp_path / "results"
    shutil.copytree(ASSETS / "models_editing" / "results", copy)
    (copy / "ROME" / "single_edits" / MODEL / "athletes_byPayment_analysis.json").unlink()
    with pytest.raises(DataError, match=r"athletes_byPayment_analysis\.json: not found"):
        score_editing(copy, DATASETS, tmp_path / "out", labels="original")
    assert not (tmp_path / "out").exists()


def test_the_results_folder_itself_and_a_single_dataset_file(tmp_path: Path) -> None:
    folders = find_generations(ASSETS / "models_editing" / "results")
    assert {(f.model, f.method) for f in folders} == {
        (MODEL, "ROME"),
        (MODEL, "MEMIT"),
        (f"{MODEL}-full-context", "IKE/single_edits"),
    }
    summary = score_editing(
        ASSETS / "models_editing" / "results", DATASETS / "llama2-7b-chat" / "editing_dataset.json", tmp_path / "out"
    )
    assert values(summary, "ROME", "All") == pytest.approx((2 / 3, 1 / 3, 4 / 9, 2 / 3))


def test_unknown_method_folders_keep_their_name_and_missing_facts_are_listed(tmp_path: Path) -> None:
    copy = tmp_path / "results"
    shutil.copytree(ASSETS / "models_editing" / "results", copy)
    shutil.copytree(copy / "MEMIT" / "batch_editing", copy / "MEMIT" / "single_edits")
    (copy / "MEMIT" / "single_edits" / MODEL / "athletes_byPayment_answers.json").unlink()
    summary = score_editing(copy, DATASETS, tmp_path / "out")
    single = summary.models[MODEL]["MEMIT/single_edits"]
    assert single.missing == ["athletes_byPayment/Carl Player"]
    assert values(summary, "MEMIT/single_edits", "All") == pytest.approx((1.0, 0.5, 2 / 3, 1.0))


def test_prediction_is_the_text_after_the_last_question() -> None:
    assert prediction("Q? A. Q? B", "Q?") == " B"
    assert prediction("just an answer", "Q?") == "just an answer"
    assert prediction("anything", None) == "anything"


def test_dataset_folder_names_map_hf_names_to_dyknows() -> None:
    assert "llama2-7b-chat" in dataset_folder_names("Llama-2-7b-chat-hf")
    assert "llama2-7b" in dataset_folder_names("Llama-2-7b-hf")
    assert dataset_folder_names("gpt-j-6B")[0] == "gpt-j-6B"


@pytest.mark.parametrize(
    ("generations", "dataset", "expected"),
    [
        ("nowhere", DATASETS, "not a folder"),
        (DATASETS, DATASETS, "no *_answers.json in DyKnow's editing layout"),
        (ASSETS, "nowhere.json", "not found"),
        (ASSETS, ASSETS, "no editing_dataset.json for model Llama-2-7b-chat-hf"),
    ],
)
def test_bad_input_is_one_error(tmp_path: Path, generations: object, dataset: object, expected: str) -> None:
    with pytest.raises(ChronoprobeError, match=expected.replace("*", r"\*")):
        score_editing(Path(str(generations)), Path(str(dataset)), tmp_path / "out")


def test_an_unknown_model_filter_lists_the_models(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="models there: Llama-2-7b-chat-hf"):
        score_editing(ASSETS, DATASETS, tmp_path / "out", models=["gpt2-xl"])


FULL_CONTEXT = ASSETS / "models_editing" / "results" / "IKE" / "single_edits" / f"{MODEL}-full-context"


@pytest.mark.parametrize("labels", ["ours", "original"])
def test_a_folder_without_a_dataset_is_skipped_and_listed(tmp_path: Path, labels: str) -> None:
    """DyKnow's IKE/single_edits/*-full-context folders have no editing dataset: every other folder is still scored."""
    summary = score_editing(ASSETS, DATASETS, tmp_path / "out", labels=labels)  # type: ignore[arg-type]
    assert list(summary.no_dataset) == [str(FULL_CONTEXT)]
    assert (
        "no editing_dataset.json for model folder 'Llama-2-7b-chat-hf-full-context'"
        in summary.no_dataset[str(FULL_CONTEXT)]
    )
    assert f"{MODEL}-full-context" not in summary.models and "ROME" in summary.models[MODEL]
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## Not scored" in report and f"`{FULL_CONTEXT}`" in report
    assert json.loads((tmp_path / "out" / "scores.json").read_text())["no_dataset"] == summary.no_dataset


def test_only_folders_without_a_dataset_is_still_one_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"no editing_dataset\.json for model Llama-2-7b-chat-hf-full-context"):
        score_editing(ASSETS, DATASETS, tmp_path / "out", models=[f"{MODEL}-full-context"])
    assert not (tmp_path / "out").exists()


DYKNOW = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "dyknow"


@pytest.mark.skipif(
    not (DYKNOW / "models_editing" / "results").is_dir(), reason="the authors' editing results are not in ../shared"
)
def test_the_authors_tree_scores_with_its_unused_folders_listed(tmp_path: Path) -> None:
    summary = score_editing(DYKNOW, DYKNOW / "models_editing" / "editing_datasets", tmp_path / "out", labels="original")
    assert summary.models
    assert any(folder.endswith("-full-context") for folder in summary.no_dataset)


def test_table_8_is_the_harmonic_mean_of_gold_and_noisy(tmp_path: Path) -> None:
    """The authors' Table 8 numbers are the harmonic mean (6/6 cells), not the soft constraint its caption names."""
    tree = tmp_path / "tree"
    shutil.copytree(ASSETS, tree)
    noisy = tree / "RAG" / "noisy_results" / MODEL
    shutil.copytree(tree / "models_editing" / "results" / "ROME" / "single_edits" / MODEL, noisy)
    for analysis in noisy.glob("*_analysis.json"):
        analysis.unlink()
    summary = score_editing(tree, DATASETS, tmp_path / "out")
    assert values(summary, "Noisy", "All") == pytest.approx((2 / 3, 1 / 3, 4 / 9, 2 / 3))
    report = (tmp_path / "out" / "report.md").read_text()
    table8 = report.split("(Table 8)")[1].split("###")[0]
    # gold HM 1, noisy HM 4/9 over all 3 facts (the soft constraint would read 66.7%)
    assert "| All | 3 | 100.0% [100.0, 100.0] | 44.4% [0.0, 66.7] |" in table8
