"""``chronoprobe editing dataset`` and ``editing score`` through the real ``main()``: output, and one-line errors (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe.testing import register_mock, unregister_mock
from cli_driver import run_main

pytestmark = pytest.mark.e2e

ASSETS = Path(__file__).resolve().parents[1] / "assets" / "editing_results"
DATASETS = ASSETS / "models_editing" / "editing_datasets"


def invoke(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    ran = run_main(monkeypatch, capsys, *args)
    return ran.code, " ".join(ran.text.split())


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real outdated run (shipped catalogue, first 2 facts) of a mock that names an Italian prime minister of the past."""
    tmp = tmp_path_factory.mktemp("audit")
    register_mock("editing-cli", lambda prompt, params: "Mario Draghi")
    try:
        run = cp.run("outdated", models="mock:editing-cli", limit=2, out=tmp / "run", cache=tmp / "c.sqlite")
    finally:
        unregister_mock("editing-cli")
    return run.path


GROUPS = "Politicians (countries_byGDP) {}, Teams (athletes_byPayment) {}, Positions (companies_byRevenue + organizations) {}"


def test_dataset_from_a_run_writes_dyknows_file_and_may_replace_its_own(
    audit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sets" / "editing_dataset.json"
    code, text = invoke(monkeypatch, capsys, "editing", "dataset", "--from", str(audit), "--out", str(out))
    assert code == 0, text
    shown = " ".join(text.split())
    assert "1 facts to edit: " + GROUPS.format(1, 0, 0) in shown
    assert (
        "A fact to edit has no question answered up-to-date, at least one answered outdated and none ambiguous" in shown
    )
    # our catalogue's wording: the subject falls back to the country; one line says so, the build record lists it
    assert "1 fact(s) take the entity's name as the edit subject" in text and "not in the edit prompt" not in text
    rows = json.loads(out.read_text())
    assert rows[0]["domain"] == "countries_byGDP" and list(rows[0]) == [
        "prompt",
        "target",
        "subject",
        "domain",
        "element",
        "attribute",
        "prompt_type",
        "questions",
        "answers",
    ]
    record = json.loads((out.parent / "editing_dataset.build.json").read_text())
    assert record["model"] == "mock:editing-cli" and "not in the edit prompt" in record["notes"][0]
    code, text = invoke(monkeypatch, capsys, "editing", "dataset", "--from", str(audit), "--out", str(out))
    assert code == 0, text  # our own file: replaced
    out.write_text(out.read_text() + " ")  # changed by hand: no longer ours
    code, text = invoke(monkeypatch, capsys, "editing", "dataset", "--from", str(audit), "--out", str(out))
    assert code == 2 and "refusing to overwrite" in text and text.count("error") == 1


def test_dataset_refuses_a_file_it_did_not_write(
    audit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.json"
    notes.write_text("my notes")
    code, text = invoke(monkeypatch, capsys, "editing", "dataset", "--from", str(audit), "--out", str(notes))
    assert code == 2 and "refusing to overwrite" in text
    assert notes.read_text() == "my notes"


def test_dataset_summarises_a_dyknow_file(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    path = DATASETS / "llama2-7b-chat" / "editing_dataset.json"
    code, text = invoke(monkeypatch, capsys, "editing", "dataset", "--dataset", str(path))
    assert code == 0, text
    assert "3 facts to edit: " + GROUPS.format(2, 1, 0) in " ".join(text.split())


def test_score_prints_a_summary_and_writes_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "scored"
    args = ["editing", "score", "--generations", str(ASSETS), "--dataset", str(DATASETS), "--out", str(out)]
    code, text = invoke(monkeypatch, capsys, *args)
    assert code == 0, text
    assert "Llama-2-7b-chat-hf ROME (3 facts): HM 44.4%" in text
    assert (out / "scores.json").is_file() and (out / "report.md").is_file()
    code, text = invoke(monkeypatch, capsys, *args, "--labels", "original")
    assert code == 0, text
    assert "not scored" in text and "HM 50.0%" in text


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["editing", "dataset"], "give one of them"),
        (["editing", "dataset", "--from", "x", "--dataset", "y"], "give one of them"),
        (["editing", "dataset", "--from", "{tmp}"], "no run.json"),
        (
            ["editing", "dataset", "--from", "{tmp}", "--select", "newest"],
            "'newest' is not one of outdated, not-up-to-date",
        ),
        (["editing", "dataset", "--dataset", "{tmp}/missing.json"], "file not found"),
        (["editing", "dataset", "--dataset", "{bad}"], "row 0"),
        (["editing", "dataset", "--dataset", "{bad}", "--out", "x.json"], "only with --from"),
        (
            ["editing", "score", "--generations", "{notes}", "--dataset", str(DATASETS), "--out", "{tmp}/o"],
            "no *_answers.json",
        ),
        (
            [
                "editing",
                "score",
                "--generations",
                str(ASSETS),
                "--dataset",
                str(DATASETS),
                "--out",
                "{tmp}/o",
                "--labels",
                "mine",
            ],
            "'mine' is not one of ours, original",
        ),
        (
            ["editing", "score", "--generations", str(ASSETS), "--dataset", "{notes}", "--out", "{tmp}/o"],
            "no editing_dataset.json for model",
        ),
        (
            ["editing", "score", "--generations", str(ASSETS), "--dataset", str(DATASETS), "--out", "{notes}"],
            "does not hold an earlier chronoprobe report",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"prompt": "p"}]))
    notes = tmp_path / "mine"
    notes.mkdir()
    (notes / "notes.txt").write_text("mine")
    filled = [a.format(tmp=tmp_path, bad=bad, notes=notes) for a in args]
    code, text = invoke(monkeypatch, capsys, *filled)
    assert code == 2, text
    assert expected in text and text.startswith("error:"), text
