"""A harness log that cannot be scored is one line naming the place, exit 2, and no output folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from chronoprobe.cli.main import main
from cli_driver import run_main

pytestmark = pytest.mark.e2e


def score(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    monkeypatch.setattr(sys, "argv", ["chronoprobe", "outdated", "score", *args])
    code: object = 0
    try:
        main()
    except SystemExit as stopped:
        code = stopped.code
    err = capsys.readouterr().err
    return (code if isinstance(code, int) else 0), [line for line in err.splitlines() if line.strip()]


def samples_file(folder: Path, docs: list[dict[str, object]]) -> Path:
    """lm-eval's --log_samples layout: <output>/<model>/samples_<task>_<time>.jsonl."""
    model = folder / "my-model"
    model.mkdir(parents=True)
    path = model / "samples_chronoprobe_outdated_2026-01-01T00-00-00.jsonl"
    rows = [{"doc_id": i, "doc": doc, "filtered_resps": ["Sergio Mattarella"]} for i, doc in enumerate(docs)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    ("docs", "expected"),
    [
        (
            [{"fact_id": "countries_byGDP/Atlantis/King"}],
            "fact_id 'countries_byGDP/Atlantis/King' is not in the catalogue",
        ),
        ([{"question": "no fact id here"}], "no sample carries a chronoprobe fact_id"),
        (
            [{"fact_id": "countries_byGDP/Italy/President of Italy", "prompt": "Who rules Italy?"}],
            "no template_index and the prompt names none of the fact's paraphrases",
        ),
    ],
)
def test_unusable_samples_are_one_line(tmp_path, monkeypatch, capsys, docs, expected) -> None:
    logs = tmp_path / "lm-out"
    samples_file(logs, docs)
    out = tmp_path / "scored"
    code, lines = score(monkeypatch, capsys, "--generations", str(logs), "--out", str(out))
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], lines
    assert not out.exists()


def test_a_paraphrase_answered_twice_is_refused(tmp_path, monkeypatch, capsys) -> None:
    doc = {"fact_id": "countries_byGDP/Italy/President of Italy", "template_index": 0}
    logs = tmp_path / "lm-out"
    samples_file(logs, [doc, doc])
    code, lines = score(monkeypatch, capsys, "--generations", str(logs), "--out", str(tmp_path / "scored"))
    assert code == 2 and len(lines) == 1 and "again" in lines[0], lines


def test_a_broken_line_names_file_and_line(tmp_path, monkeypatch, capsys) -> None:
    path = samples_file(tmp_path / "lm-out", [{"fact_id": "countries_byGDP/Italy/President of Italy"}])
    path.write_text(path.read_text() + "{not json\n")
    code, lines = score(monkeypatch, capsys, "--generations", str(path), "--out", str(tmp_path / "scored"))
    assert code == 2 and len(lines) == 1 and f"{path}:2" in lines[0], lines


def test_a_damaged_inspect_log_is_one_line(tmp_path, monkeypatch, capsys) -> None:
    log = tmp_path / "run.eval"
    log.write_bytes(b"not a zip file")
    code, lines = score(monkeypatch, capsys, "--generations", str(log), "--out", str(tmp_path / "scored"))
    # without chronoprobe[inspect] it says how to install it; with it, that inspect cannot read the file
    assert code == 2 and len(lines) == 1, lines
    assert "chronoprobe[inspect]" in lines[0] or "inspect could not read it" in lines[0]


def test_gold_is_for_dyknow_folders_only(tmp_path, monkeypatch, capsys) -> None:
    logs = tmp_path / "lm-out"
    samples_file(logs, [{"fact_id": "countries_byGDP/Italy/President of Italy", "template_index": 0}])
    grc = tmp_path / "grc_generated.json"
    grc.write_text("{}")
    code, lines = score(
        monkeypatch, capsys, "--generations", str(logs), "--out", str(tmp_path / "s"), "--gold", str(grc)
    )
    assert code == 2 and len(lines) == 1 and "--gold" in lines[0], lines


def test_hand_written_samples_score_into_a_run_folder(tmp_path, monkeypatch, capsys) -> None:
    """The current President of Italy, for each paraphrase found by its text: all up-to-date."""
    from chronoprobe.integrations.outdated_items import load_items

    items, _ = load_items(limit=1)
    docs: list[dict[str, object]] = [{"fact_id": i.fact.fact_id, "prompt": i.user_message} for i in items]
    logs = tmp_path / "lm-out"
    samples_file(logs, docs)
    out = tmp_path / "scored"
    # the cutoff names the model as the log records it (its folder under --output_path, without a results file)
    given = ("--cutoff", "my-model=2023-06", "--deployed-at", "2024-01")
    code, lines = score(monkeypatch, capsys, "--generations", str(logs), "--out", str(out), *given)
    assert code == 0, lines
    assert "my-model: published cutoff 2023-06 (--cutoff)" in lines
    assert any(line.startswith("my-model: deployed on 2024-01, stale: ") for line in lines), lines
    rows = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert [r["template_index"] for r in rows] == [0, 1, 2]
    assert {r["verdict"] for r in rows} == {"up-to-date"} and {r["model"] for r in rows} == {"my-model"}
    log = json.loads((out / "run.json").read_text())
    dated = json.loads((out / "summary.json").read_text())["models"]["my-model"]["knowledge_date"]["per_category"][
        "all"
    ]["estimate"]
    assert dated["n"] == 1 and dated["value"] is not None  # the knowledge date, as outdated run gives it
    report = (out / "report.md").read_text()
    assert "## Knowledge date" in report and "Published cutoff: 2023-06." in report and "Deployed on 2024-01" in report
    assert any(m["name"] == "knowledge_date" for m in log["summary"]["metrics"])
    assert log["config"]["cutoff"] == {"my-model": "2023-06"} and log["config"]["deployed_at"] == "2024-01"
    cutoff = [m for m in log["summary"]["metrics"] if m["name"] == "published_cutoff"]
    assert [(m["model"], round(m["value"], 4)) for m in cutoff] == [("my-model", 2023.4167)]  # June 2023
    table = tmp_path / "table.csv"
    assert run_main(monkeypatch, capsys, "results", str(out), "--out", str(table)).code == 0
    assert "my-model,outdated,dyknow-2023-12-18,all,published_cutoff,2023.41666" in table.read_text()
    card = tmp_path / "card.html"
    assert run_main(monkeypatch, capsys, "card", str(out), "--out", str(card)).code == 0
    assert 'data-metric="published_cutoff" data-value="2023.41666' in card.read_text()


ITALY = "countries_byGDP/Italy/President of Italy"
NOT_UTF8 = b'{"doc": {"fact_id": "x"}}\n{"doc": {"fact_id": "caf\xe9"}}\n'


def _results_file(folder: Path, content: object) -> None:
    (folder / "my-model" / "results_2026-01-01T00-00-00.json").write_text(json.dumps(content))


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (
            lambda logs: samples_file(logs, [{"fact_id": ITALY, "template_index": "second"}]),
            "'second' is not an integer",
        ),
        (lambda logs: samples_file(logs, [{"fact_id": ITALY, "template_index": 1.5}]), "1.5 is not an integer"),
        (lambda logs: samples_file(logs, [{"fact_id": ITALY, "template_index": True}]), "True is not an integer"),
        (lambda logs: samples_file(logs, []).write_bytes(NOT_UTF8), "jsonl:2: not UTF-8 text"),
        (
            lambda logs: (samples_file(logs, [{"fact_id": ITALY, "template_index": 0}]), _results_file(logs, [1, 2])),
            "expected a JSON object, found a list",
        ),
        (
            lambda logs: (
                samples_file(logs, [{"fact_id": ITALY, "template_index": 0}]),
                _results_file(logs, {"config": "hf"}),
            ),
            "config is a string, expected an object",
        ),
        (
            lambda logs: (
                samples_file(logs, [{"fact_id": ITALY, "template_index": 0}]),
                _results_file(logs, {"configs": {"chronoprobe_outdated": {"generation_kwargs": [1]}}}),
            ),
            "configs.chronoprobe_outdated.generation_kwargs is a list, expected an object",
        ),
        (
            lambda logs: (
                samples_file(logs, [{"fact_id": ITALY, "template_index": 0}]),
                (logs / "my-model" / "results_x.json").write_bytes(b"\xff\xfe{"),
            ),
            "not valid UTF-8 JSON",
        ),
    ],
    ids=[
        "index-word",
        "index-fraction",
        "index-bool",
        "samples-not-utf8",
        "results-list",
        "config-string",
        "generation-kwargs-list",
        "results-not-utf8",
    ],
)
def test_damaged_lm_eval_output_is_one_line(tmp_path, monkeypatch, capsys, damage, expected) -> None:
    logs = tmp_path / "lm-out"
    damage(logs)
    before = sorted(logs.rglob("*"))
    out = tmp_path / "scored"
    code, lines = score(monkeypatch, capsys, "--generations", str(logs), "--out", str(out))
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], lines
    assert str(logs) in lines[0]  # names the file
    assert not out.exists() and sorted(logs.rglob("*")) == before


def test_a_file_that_is_not_text_in_a_log_folder_is_no_inspect_log(tmp_path, monkeypatch, capsys) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "notes.json").write_bytes(b'\xff{"eval": "version"}')
    code, lines = score(monkeypatch, capsys, "--generations", str(logs), "--out", str(tmp_path / "scored"))
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"error: {logs}: "), lines
